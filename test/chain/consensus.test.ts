import t, { type Test } from 'tap'
import { ChainClient } from '../../src/chain/client.js'
import { readBlock, readValidatorSet } from '../../src/chain/consensus.js'
import { ChainStatusError } from '../../src/errors.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { LARGE_COMMIT_BLOCK, SIGNED_BASE, setAt, signedBlockAnswer } from '../../harness/chain-simulator/data/commits.js'

const SETS = '/cosmos/base/tendermint/v1beta1/validatorsets/'

async function setup (t: Test) {
  const sim = await startChainSimulator()
  const client = new ChainClient({ baseUrl: sim.url, timeoutMs: 5000, concurrency: 4 })
  t.teardown(async () => {
    await client.close()
    await sim.close()
  })
  return { sim, client }
}

t.test('the block: sdk_block, else block (an SDK older than 0.47 answers only that)', async (t) => {
  const { sim, client } = await setup(t)
  const height = SIGNED_BASE + 2
  const answer = signedBlockAnswer(height) as { block: unknown, sdk_block: unknown }
  t.same(await readBlock(client, BigInt(height)), answer.sdk_block)
  sim.override(`/cosmos/base/tendermint/v1beta1/blocks/${height}`, { block: answer.block })
  t.same(await readBlock(client, BigInt(height)), answer.block)
  await t.rejects(readBlock(client, 0n), ChainStatusError, 'the chain\'s errors pass through')
})

t.test('a set larger than one page (150 validators) is read in full: the first page, then the rest together', async (t) => {
  const { sim, client } = await setup(t)
  const height = LARGE_COMMIT_BLOCK - 1
  const set = await readValidatorSet(client, BigInt(height))
  t.equal(set.length, 150)
  t.same(set.map((v) => Buffer.from(v.pubKey).toString('base64')), setAt(height).map((v) => v.pubKey.toString('base64')), 'every key, in the gateway\'s order')
  t.same(set.map((v) => v.votingPower), setAt(height).map((v) => v.power))
  t.same(sim.requests, [
    `${SETS}${height}?pagination.offset=0&pagination.limit=100`,
    `${SETS}${height}?pagination.offset=100&pagination.limit=100`
  ])
})

t.test('a set of one page is one request', async (t) => {
  const { sim, client } = await setup(t)
  t.equal((await readValidatorSet(client, BigInt(SIGNED_BASE))).length, 4)
  t.equal(sim.requests.length, 1)
  // An answer without pagination counts what it holds.
  sim.override(`${SETS}${SIGNED_BASE}`, { validators: [] })
  t.same(await readValidatorSet(client, BigInt(SIGNED_BASE)), [])
})

t.test('each validator\'s proposer priority, when the node gives one, is passed on; absent, it is left out', async (t) => {
  const { sim, client } = await setup(t)
  const key = { '@type': '/cosmos.crypto.ed25519.PubKey', key: Buffer.alloc(32, 1).toString('base64') }
  sim.override(`${SETS}5`, { validators: [{ pub_key: key, voting_power: '7', proposer_priority: '-12' }, { pub_key: { ...key, key: Buffer.alloc(32, 2).toString('base64') }, voting_power: '3' }] })
  const set = await readValidatorSet(client, 5n)
  t.same(set.map((v) => v.proposerPriority), [-12n, undefined])
  t.notOk('proposerPriority' in (set[1] as object), 'absent: no field at all')
})

t.test('malformed chain data is an error (the route answers 500)', async (t) => {
  const { sim, client } = await setup(t)
  const key = { '@type': '/cosmos.crypto.ed25519.PubKey', key: Buffer.alloc(32, 1).toString('base64') }
  const cases: Array<[unknown, RegExp]> = [
    [{ validators: [], pagination: { total: '20000' } }, /claims 20000 validators/],
    [{ validators: [], pagination: { total: 'many' } }, /claims many validators/],
    [{ validators: [], pagination: { total: '1' } }, /has 1 validators, but its pages held 0/],
    [{ pagination: { total: '150' } }, /has 150 validators, but its pages held 0/],
    [{ validators: [{ pub_key: { '@type': '/cosmos.crypto.secp256k1.PubKey', key: 'AA==' }, voting_power: '1' }] }, /validator #0 at height 5 has a \/cosmos.crypto.secp256k1.PubKey key; only \/cosmos.crypto.ed25519.PubKey is supported/],
    [{ validators: [{ pub_key: null, voting_power: '1' }] }, /has a missing key/],
    [{ validators: [{ pub_key: { ...key, key: 'not base64' }, voting_power: '1' }] }, /validator #0 at height 5 has a \/cosmos.crypto.ed25519.PubKey key; only/],
    [{ validators: [{ pub_key: key, voting_power: '-1' }] }, /validator #0 at height 5 has voting power "-1"/],
    [{ validators: [{ pub_key: key }] }, /has voting power undefined/],
    [{ validators: [{ pub_key: key, voting_power: '1', proposer_priority: '1.5' }] }, /validator #0 at height 5 has proposer priority "1.5"/]
  ]
  for (const [answer, message] of cases) {
    sim.override(`${SETS}5`, answer)
    await t.rejects(readValidatorSet(client, 5n), message, String(message))
  }
})
