import t from 'tap'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'
import { isFixedRead } from '../../src/cache/route-classes.js'
import { buildTestApp } from '../fixtures/app.js'
import { BlockClock } from '../../harness/chain-simulator/block-clock.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'

// The chain reads a height decides once and for all (a block, a validator set, a store query
// at a given height) are kept with the answers: a later answer at a later head reads them
// from the cache (docs/heights-and-cache.md §5).

const BLOCKS = '/cosmos/base/tendermint/v1beta1/blocks/'
const VALIDATORS = '/cosmos/base/tendermint/v1beta1/validatorsets/'
const ABCI = '/cosmos/base/tendermint/v1beta1/abci_query'
const EPOCH_INFO = '/productscience/inference/inference/epoch_info'

t.test('the epoch participants at the next block: 0 chain requests for the proof, the block and the validator set', async (t) => {
  const clock = new BlockClock()
  const sim = await startChainSimulator(0, { clock })
  t.teardown(() => sim.close())
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1ms' } })
  const first = await app.inject('/v1/epochs/current/participants')
  t.equal(first.statusCode, 200)
  const fixed = sim.requests.filter((r) => !r.startsWith(LATEST_BLOCK_PATH) && (r.startsWith(BLOCKS) || r.startsWith(VALIDATORS) || r.includes('prove=true')))
  t.equal(fixed.length, 3, `the first answer reads them: ${fixed.join(', ')}`)

  clock.advance()
  sim.resetCounts()
  const second = await app.inject('/v1/epochs/current/participants')
  t.equal(second.statusCode, 200)
  t.equal(Number(second.headers['x-block-height']), Number(first.headers['x-block-height']) + 1, 'the next block: a new answer')
  t.equal(second.headers['x-cache'], 'miss')
  const reads = sim.requests.filter((r) => !r.startsWith(LATEST_BLOCK_PATH))
  t.equal(reads.filter((r) => r.startsWith(BLOCKS) || r.startsWith(VALIDATORS)).length, 0, 'no block, no validator set')
  t.equal(reads.filter((r) => r.includes('prove=true')).length, 0, 'no proven store query')
  t.ok(reads.some((r) => r.startsWith(ABCI)), 'the store entry at the new height is read')
  const { block, validators, proof_ops: proof, active_participants_bytes: bytes } = second.json()
  t.same({ block, validators, proof, bytes }, (({ block, validators, proof_ops: proof, active_participants_bytes: bytes }) => ({ block, validators, proof, bytes }))(first.json()), 'the same proof, block and validator set')
})

t.test('a fixed read that fails is not kept: asked again by the next answer', async (t) => {
  const clock = new BlockClock()
  const sim = await startChainSimulator(0, { clock })
  t.teardown(() => sim.close())
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1ms' } })
  sim.fail(VALIDATORS, 13, 'internal error')
  t.ok((await app.inject('/v1/epochs/current/participants')).statusCode >= 500, 'the answer fails')
  sim.clearFaults()
  clock.advance()
  sim.resetCounts()
  t.equal((await app.inject('/v1/epochs/current/participants')).statusCode, 200)
  t.equal(sim.count(VALIDATORS), 1, 'the validator set asked again')
  t.equal(sim.count(BLOCKS) - sim.count(LATEST_BLOCK_PATH), 0, 'the block, kept from the first answer')
})

t.test('which chain reads a height fixes', async (t) => {
  t.ok(isFixedRead(`${BLOCKS}12`, undefined))
  t.ok(isFixedRead(`${VALIDATORS}12`, {}))
  t.notOk(isFixedRead(LATEST_BLOCK_PATH, undefined), 'the latest block moves')
  t.ok(isFixedRead(ABCI, { path: '/store/inference/key', data: 'AA==', height: '12' }))
  t.notOk(isFixedRead(ABCI, { path: '/store/inference/key', data: 'AA==' }), 'a store query at the latest height')
  t.notOk(isFixedRead(ABCI, undefined))
  t.notOk(isFixedRead(EPOCH_INFO, undefined))
})

t.test('a read the height does not fix is never kept: asked again at the next block', async (t) => {
  const clock = new BlockClock()
  const sim = await startChainSimulator(0, { clock })
  t.teardown(() => sim.close())
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1ms' } })
  t.equal((await app.inject('/v1/epochs/latest')).statusCode, 200)
  clock.advance()
  sim.resetCounts()
  const second = await app.inject('/v1/epochs/latest')
  t.equal(second.statusCode, 200)
  t.equal(second.headers['x-cache'], 'miss', 'the next block: a new answer')
  t.ok(sim.count(EPOCH_INFO) >= 1, 'its chain state read again, at the new height')
})
