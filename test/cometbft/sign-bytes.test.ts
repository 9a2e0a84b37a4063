import { readFileSync } from 'node:fs'
import { ed25519 } from '@noble/curves/ed25519.js'
import t from 'tap'
import { PRECOMMIT_TYPE, voteSignBytes, type CanonicalVote } from '../../src/cometbft/sign-bytes.js'
import { isZeroBlockId } from '../../src/cometbft/types.js'
import { parseTimestamp, ZERO_TIME, type Timestamp } from '../../src/cometbft/timestamp.js'

const ZERO_ID = { hash: new Uint8Array(), partSetHeader: { total: 0, hash: new Uint8Array() } }
const vote = (v: Partial<CanonicalVote>): CanonicalVote => ({ type: 0, height: 0n, round: 0, blockId: undefined, timestamp: ZERO_TIME, chainId: '', ...v })

// CometBFT's own vectors: types/vote_test.go TestVoteSignBytesTestVectors (cometbft/cometbft,
// commit 008e79aa91fc2ee05c947e0534288f68c2336515). Vote{} has Go's zero time, whose seconds
// (-62135596800) are the 10-byte varint in every vector; type 0 and height/round 0 are left out.
const ZERO_TIME_FIELD = [0x2a, 0xb, 0x8, 0x80, 0x92, 0xb8, 0xc3, 0x98, 0xfe, 0xff, 0xff, 0xff, 0x1]
const HEIGHT_1 = [0x11, 0x1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0]
const ROUND_1 = [0x19, 0x1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0]
const CHAIN_ID = [0x32, 0xd, 0x74, 0x65, 0x73, 0x74, 0x5f, 0x63, 0x68, 0x61, 0x69, 0x6e, 0x5f, 0x69, 0x64]

t.test('CometBFT TestVoteSignBytesTestVectors', async (t) => {
  const vectors: Array<[string, CanonicalVote, number[]]> = [
    ['#0 empty vote', vote({}), [0xd, ...ZERO_TIME_FIELD]],
    ['#1 precommit, height 1, round 1', vote({ type: 2, height: 1n, round: 1 }), [0x21, 0x8, 0x2, ...HEIGHT_1, ...ROUND_1, ...ZERO_TIME_FIELD]],
    ['#2 prevote, height 1, round 1', vote({ type: 1, height: 1n, round: 1 }), [0x21, 0x8, 0x1, ...HEIGHT_1, ...ROUND_1, ...ZERO_TIME_FIELD]],
    ['#3 no type', vote({ height: 1n, round: 1 }), [0x1f, ...HEIGHT_1, ...ROUND_1, ...ZERO_TIME_FIELD]],
    ['#4 with chain id', vote({ height: 1n, round: 1, chainId: 'test_chain_id' }), [0x2e, ...HEIGHT_1, ...ROUND_1, ...ZERO_TIME_FIELD, ...CHAIN_ID]]
  ]
  for (const [name, v, want] of vectors) t.same(Buffer.from(voteSignBytes(v)).toString('hex'), Buffer.from(want).toString('hex'), name)
})

t.test('a zero block ID is left out, as CometBFT canonicalizes it to none', async (t) => {
  t.ok(isZeroBlockId(ZERO_ID))
  t.notOk(isZeroBlockId({ ...ZERO_ID, partSetHeader: { total: 1, hash: new Uint8Array() } }))
  t.same(voteSignBytes(vote({ blockId: ZERO_ID })), voteSignBytes(vote({})))
})

t.test('a block ID with its part set header; empty parts of it left out', async (t) => {
  const hash = new Uint8Array(32).fill(0xaa)
  const parts = new Uint8Array(32).fill(0xbb)
  const full = Buffer.from(voteSignBytes(vote({ type: 2, blockId: { hash, partSetHeader: { total: 3, hash: parts } }, timestamp: { seconds: 1, nanos: 2 } })))
  t.equal(full.toString('hex'), [
    '52', // length 82: 2 + 2 + 72 + 6
    '0802',
    `2248 0a20${'aa'.repeat(32)} 1224 0803 1220${'bb'.repeat(32)}`,
    '2a04 0801 1002'
  ].join('').replace(/ /g, ''))
  const hashOnly = Buffer.from(voteSignBytes(vote({ blockId: { hash, partSetHeader: { total: 0, hash: new Uint8Array() } }, timestamp: { seconds: 0, nanos: 0 } })))
  t.equal(hashOnly.toString('hex'), `28 2224 0a20${'aa'.repeat(32)} 1200 2a00`.replace(/ /g, ''), 'the part set header is non-nullable: always written; so is the timestamp')
})

interface Fixture {
  genesis: { chain_id: string, validators: Array<{ pub_key: { value: string } }> }
  block_at_height_10: { last_commit: RpcCommit }
  commit_at_height_10: RpcCommit
}
interface RpcCommit {
  height: string
  round: number
  block_id: { hash: string, parts: { hash: string, total: number } }
  signatures: Array<{ signature: string, timestamp: string }>
}
const fixture = JSON.parse(readFileSync(new URL('../fixtures/verify/tendermint-rs-kvstore-v0_38.json', import.meta.url), 'utf8')) as Fixture
const genesisKey = Buffer.from(fixture.genesis.validators[0]?.pub_key.value as string, 'base64')

function rpcVote (commit: RpcCommit, timestamp: Timestamp): CanonicalVote {
  return {
    type: PRECOMMIT_TYPE,
    height: BigInt(commit.height),
    round: commit.round,
    blockId: { hash: Buffer.from(commit.block_id.hash, 'hex'), partSetHeader: { total: commit.block_id.parts.total, hash: Buffer.from(commit.block_id.parts.hash, 'hex') } },
    timestamp,
    chainId: fixture.genesis.chain_id
  }
}

t.test('real CometBFT v0.38 commits (tendermint-rs fixtures) verify with the genesis key', async (t) => {
  for (const commit of [fixture.commit_at_height_10, fixture.block_at_height_10.last_commit]) {
    const sig = commit.signatures[0] as { signature: string, timestamp: string }
    const timestamp = parseTimestamp(sig.timestamp) as Timestamp
    const signature = Buffer.from(sig.signature, 'base64')
    t.ok(ed25519.verify(signature, voteSignBytes(rpcVote(commit, timestamp)), genesisKey), `the commit for height ${commit.height}`)
    const later = { ...timestamp, nanos: timestamp.nanos + 1 }
    t.notOk(ed25519.verify(signature, voteSignBytes(rpcVote(commit, later)), genesisKey), 'one nanosecond off, and it does not')
    t.notOk(ed25519.verify(signature, voteSignBytes({ ...rpcVote(commit, timestamp), chainId: 'gonka-mainnet' }), genesisKey), 'another chain id, and it does not')
  }
})
