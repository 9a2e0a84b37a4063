import { readFileSync } from 'node:fs'
import t from 'tap'
import { BlockJsonError, decodeBlockJson } from '../../src/cometbft/block-json.js'
import { BlockIdFlag } from '../../src/cometbft/types.js'
import { ZERO_TIME } from '../../src/cometbft/timestamp.js'
import { SIGNED_BASE, signedBlockAnswer } from '../../harness/chain-simulator/data/commits.js'

const fixture = JSON.parse(readFileSync(new URL('../fixtures/verify/tendermint-rs-kvstore-v0_38.json', import.meta.url), 'utf8')) as { block_at_height_10: Record<string, unknown> }
const rpcBlock = fixture.block_at_height_10

t.test('CometBFT\'s JSON (its RPC /block): hex hashes, block_id.parts, int64 strings, numeric flags', async (t) => {
  const block = decodeBlockJson(rpcBlock)
  t.equal(block.chainId, 'dockerchain')
  t.equal(block.height, 10n)
  const commit = block.lastCommit
  t.equal(commit?.height, 9n)
  t.equal(commit?.round, 0)
  t.equal(Buffer.from(commit?.blockId.hash as Uint8Array).toString('hex').toUpperCase(), '678A83FB0422D053A3792154703122861DD68ABB8247A4FF2945DF832DB18FC8')
  t.equal(commit?.blockId.partSetHeader.total, 1)
  t.equal(Buffer.from(commit?.blockId.partSetHeader.hash as Uint8Array).toString('hex').toUpperCase(), '29FE32F6B57D8439C9E9F6240B436DD560646FDA8C8C105E2C261B6F4746E89C')
  t.same(commit?.signatures[0], {
    blockIdFlag: BlockIdFlag.Commit,
    validatorAddress: Buffer.from('2DD9F44FD9067555C322243C3C913BA7B51D2BE0', 'hex'),
    timestamp: { seconds: 1684332773, nanos: 88875124 },
    signature: Buffer.from('BMy5pB3a9xeEnuBkja/a6GUvP1guZ2lMQtZYvdrl8s0ri1/LaF0JuI9rOsy1biVTv+TDKzlBXTZ5gdgiq0uCAg==', 'base64')
  })
  // Go's encoding/json of types.Block: JSON numbers for int64.
  const goJson = { ...rpcBlock, header: { ...(rpcBlock.header as object), height: 10 }, last_commit: { ...(rpcBlock.last_commit as object), height: 9 } }
  t.same(decodeBlockJson(goJson), block, 'numbers and decimal strings alike')
})

t.test('the chain gateway\'s protojson: base64 bytes, block_id.part_set_header, enum names', async (t) => {
  const answer = signedBlockAnswer(SIGNED_BASE + 2) as { sdk_block: Record<string, unknown> }
  const block = decodeBlockJson(answer.sdk_block)
  t.equal(block.chainId, 'gonka-mainnet')
  t.equal(block.height, BigInt(SIGNED_BASE + 2))
  const commit = block.lastCommit
  t.equal(commit?.height, BigInt(SIGNED_BASE + 1))
  t.equal(commit?.round, 1)
  t.same(commit?.signatures.map((s) => s.blockIdFlag), [BlockIdFlag.Commit, BlockIdFlag.Commit, BlockIdFlag.Nil, BlockIdFlag.Absent])
  t.same(commit?.signatures[3], { blockIdFlag: BlockIdFlag.Absent, validatorAddress: new Uint8Array(), timestamp: ZERO_TIME, signature: new Uint8Array() })
  t.equal(commit?.signatures[0]?.validatorAddress.length, 20)
  t.match(commit?.signatures[0]?.timestamp, { seconds: Number, nanos: Number })
})

t.test('null and missing pieces read as their zero values', async (t) => {
  const sdk = (signedBlockAnswer(SIGNED_BASE + 2) as { sdk_block: { header: object, last_commit: Record<string, unknown> } }).sdk_block
  const sigs = sdk.last_commit.signatures as Array<Record<string, unknown>>
  const block = decodeBlockJson({
    header: sdk.header,
    last_commit: { ...sdk.last_commit, round: undefined, block_id: { hash: null, part_set_header: { hash: null } }, signatures: [{ ...sigs[3], validator_address: null, signature: null, timestamp: null }] }
  })
  t.same(block.lastCommit, {
    height: BigInt(SIGNED_BASE + 1),
    round: 0,
    blockId: { hash: new Uint8Array(), partSetHeader: { total: 0, hash: new Uint8Array() } },
    signatures: [{ blockIdFlag: BlockIdFlag.Absent, validatorAddress: new Uint8Array(), timestamp: ZERO_TIME, signature: new Uint8Array() }]
  })
  t.same(decodeBlockJson({ header: sdk.header, last_commit: { ...sdk.last_commit, signatures: undefined } }).lastCommit?.signatures, [])
  t.same(decodeBlockJson({ ...rpcBlock, last_commit: { ...(rpcBlock.last_commit as object), block_id: { hash: null, parts: {} } } }).lastCommit?.blockId,
    { hash: new Uint8Array(), partSetHeader: { total: 0, hash: new Uint8Array() } })
  t.equal(decodeBlockJson({ header: sdk.header }).lastCommit, undefined, 'no last commit')
  t.equal(decodeBlockJson({ header: sdk.header, last_commit: null }).lastCommit, undefined)
})

t.test('what cannot be read is refused, naming the field', async (t) => {
  const rpc = rpcBlock as { header: Record<string, unknown>, last_commit: Record<string, unknown> }
  const commit = rpc.last_commit
  const sig = (commit.signatures as Array<Record<string, unknown>>)[0] as Record<string, unknown>
  const withCommit = (c: Record<string, unknown>): unknown => ({ ...rpc, last_commit: { ...commit, ...c } })
  const withSig = (s: Record<string, unknown>): unknown => withCommit({ signatures: [{ ...sig, ...s }] })
  const cases: Array<[unknown, string]> = [
    [null, 'block: must be an object'],
    [[], 'block: must be an object'],
    [{ last_commit: {} }, 'header: must be an object'],
    [{ ...rpc, header: { ...rpc.header, chain_id: 5 } }, 'header.chain_id: must be a string'],
    [{ ...rpc, header: { ...rpc.header, height: '1e3' } }, 'header.height: must be a 64-bit integer (a JSON number or a decimal string)'],
    [{ ...rpc, header: { ...rpc.header, height: 2 ** 53 } }, 'header.height: must be a 64-bit integer (a JSON number or a decimal string)'],
    [{ ...rpc, header: { ...rpc.header, height: '9223372036854775808' } }, 'header.height: must be a 64-bit integer (a JSON number or a decimal string)'],
    [{ ...rpc, last_commit: 'x' }, 'last_commit: must be an object'],
    [withCommit({ block_id: undefined }), 'last_commit.block_id: must be an object'],
    [withCommit({ block_id: { hash: '' } }), 'last_commit.block_id: needs part_set_header (chain gateway JSON) or parts (CometBFT JSON)'],
    [withCommit({ block_id: { hash: '', parts: 7 } }), 'last_commit.block_id.parts: must be an object'],
    [withCommit({ block_id: { hash: '', parts: { total: -1 } } }), 'last_commit.block_id.parts.total: must be an integer from 0 to 4294967295'],
    [withCommit({ block_id: { hash: 'zz', parts: {} } }), "last_commit.block_id.hash: encoding/hex: invalid byte: U+007A 'z'"],
    [withCommit({ block_id: { hash: 12, parts: {} } }), 'last_commit.block_id.hash: must be a hex string'],
    [withCommit({ block_id: { hash: '', part_set_header: { hash: 'not base64!' } } }), 'last_commit.block_id.part_set_header.hash: must be standard base64'],
    [withCommit({ round: 2 ** 31 }), 'last_commit.round: must be an integer from -2147483648 to 2147483647'],
    [withCommit({ round: '1.5' }), 'last_commit.round: must be an integer from -2147483648 to 2147483647'],
    [withCommit({ signatures: {} }), 'last_commit.signatures: must be an array'],
    [withCommit({ signatures: [7] }), 'last_commit.signatures[0]: must be an object'],
    [withSig({ block_id_flag: 'BLOCK_ID_FLAG_MAYBE' }), 'last_commit.signatures[0].block_id_flag: must be an integer from 0 to 255'],
    [withSig({ block_id_flag: 256 }), 'last_commit.signatures[0].block_id_flag: must be an integer from 0 to 255'],
    [withSig({ timestamp: '2023-05-17' }), 'last_commit.signatures[0].timestamp: must be an RFC 3339 time, e.g. 2026-01-15T10:00:00.123456789Z'],
    [withSig({ timestamp: 1684332773 }), 'last_commit.signatures[0].timestamp: must be an RFC 3339 time, e.g. 2026-01-15T10:00:00.123456789Z'],
    [withSig({ signature: 'BMy5' + '!' }), 'last_commit.signatures[0].signature: must be standard base64'],
    [withSig({ signature: 5 }), 'last_commit.signatures[0].signature: must be standard base64']
  ]
  for (const [block, message] of cases) t.throws(() => decodeBlockJson(block), new BlockJsonError(message), message)
  t.same(decodeBlockJson(withSig({ block_id_flag: 'BLOCK_ID_FLAG_NIL', round: undefined })).lastCommit?.signatures[0]?.blockIdFlag, BlockIdFlag.Nil, 'names in either encoding')
  t.same(decodeBlockJson(withCommit({ round: '3' })).lastCommit?.round, 3)
})
