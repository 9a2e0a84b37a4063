import t from 'tap'
import { InvalidBlockError } from '../../src/cometbft/block-from-proto.js'
import { rpcSignedHeader, rpcValidators } from '../../src/cometbft/rpc-json.js'
import { blockJson } from '../../harness/chain-simulator/chain-json.js'
import { SignedChain } from '../../harness/chain-simulator/signed-chain.js'
import { headerHash } from '../../src/light/header-hash.js'
import { signedHeader, validatorSet } from '../fixtures/light/light-block-json.js'

// The gateway's blocks and sets as CometBFT RPC writes them, read back with tendermint-rs's
// JSON reader (test/fixtures/light/light-block-json.ts): the header still hashes to the
// block ID the commit signs, the set to the header's validators_hash.

const chain = new SignedChain()
const H = chain.firstHeight + 10
/** The gateway's `block` at `height` (tendermint.types.Block in protojson). */
const gatewayBlock = (height: number): Record<string, any> => {
  const { header, blockId } = chain.block(height)
  return (blockJson(header, blockId, chain.block(height - 1).commit) as { block: Record<string, any> }).block
}

t.test('a signed header: header H (64-bit integers as strings) and the commit for H from the block above; it still hashes to what was signed', async (t) => {
  const json = rpcSignedHeader(gatewayBlock(H), gatewayBlock(H + 1))
  t.equal(json.canonical, true)
  t.same(json.signed_header.header.version, { block: '11', app: '0' }, 'an app version of 0 is written, as CometBFT RPC does')
  t.equal(json.signed_header.header.height, String(H))
  t.equal(json.signed_header.commit.height, String(H))
  const read = signedHeader(JSON.parse(JSON.stringify(json.signed_header)))
  t.same(headerHash(read.header), chain.block(H).blockId.hash, 'the header read back hashes to the block ID')
  t.same(read.commit, chain.block(H).commit, 'the commit is the chain\'s')
})

t.test('a block above with no commit, or the commit of another height, or a header CometBFT refuses: InvalidBlockError', async (t) => {
  t.throws(() => rpcSignedHeader(gatewayBlock(H), { ...gatewayBlock(H + 1), last_commit: null }), new InvalidBlockError(`the block above height ${H} carries no commit`))
  t.throws(() => rpcSignedHeader(gatewayBlock(H), gatewayBlock(H + 2)), new InvalidBlockError(`the block above height ${H} carries the commit for height ${H + 1}`))
  const block = gatewayBlock(H)
  t.throws(() => rpcSignedHeader({ ...block, header: { ...block.header, version: {} } }, gatewayBlock(H + 1)), /block protocol is incorrect: got: 0, want: 11/)
})

t.test('a validator set: every validator with its address, amino-named key and power; the proposer priority only when given', async (t) => {
  const set = chain.validatorSet(H)
  const inputs = set.validators.map((v, i) => ({ pubKey: v.pubKey, votingPower: v.votingPower, ...(i === 0 ? { proposerPriority: -5n } : {}) }))
  const json = rpcValidators(BigInt(H), inputs)
  t.same({ block_height: json.block_height, count: json.count, total: json.total }, { block_height: String(H), count: String(inputs.length), total: String(inputs.length) })
  t.equal(json.validators[0]?.proposer_priority, '-5')
  t.notOk('proposer_priority' in (json.validators[1] as object), 'none given: none written')
  t.equal(json.validators[0]?.address, Buffer.from(set.validators[0]?.address as Uint8Array).toString('hex').toUpperCase())
  t.same(validatorSet(JSON.parse(JSON.stringify(json))), set, 'read back: the same set, in the same order')
})
