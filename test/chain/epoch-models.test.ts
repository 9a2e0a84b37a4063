import t, { type Test } from 'tap'
import { pino, type Logger } from 'pino'
import type { ChainClient } from '../../src/chain/client.js'
import { currentEpochModels } from '../../src/chain/epoch-models.js'
import type { ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { startChain } from '../fixtures/chain.js'
import { LogLines, type LogLine } from '../../harness/log-lines.js'
import { until } from '../../harness/wait.js'
import {
  EPOCH_INDEX, MISSING_SUB_GROUP, MODELS, SNAPSHOTLESS_SUB_GROUP, SUB_GROUP_MODELS
} from '../../harness/chain-simulator/data/models.js'

const CURRENT = '/productscience/inference/inference/current_epoch_group_data'
const SUB_GROUP = '/productscience/inference/inference/epoch_group_data/'

async function setup (t: Test): Promise<{ sim: ChainSimulator, chain: ChainClient, lines: LogLine[], log: Logger }> {
  const { sim, chain } = await startChain(t)
  const { lines, stream } = new LogLines()
  return { sim, chain, lines, log: pino({ level: 'debug' }, stream) }
}

t.test('reads the parent group, then every sub-group of its epoch, keeping those with a snapshot in order', async (t) => {
  const { sim, chain, lines, log } = await setup(t)
  const result = await currentEpochModels(chain, log)
  t.equal(result.unitOfComputePrice, 100)
  t.same(result.snapshots.map((s) => s.id), MODELS.map((m) => m.id))
  t.equal(sim.count(CURRENT), 1)
  t.equal(sim.count(SUB_GROUP), SUB_GROUP_MODELS.length, 'one request per sub-group')
  for (const id of SUB_GROUP_MODELS) {
    t.ok(sim.requests.includes(`${SUB_GROUP}${EPOCH_INDEX}?model_id=${encodeURIComponent(id)}`), `queried ${id} in epoch ${EPOCH_INDEX}`)
  }
  const skipped = lines.filter((l) => l.level === 20).map((l) => [l.modelId, l.msg])
  t.same(skipped.sort(), [
    [SNAPSHOTLESS_SUB_GROUP, 'sub-group has no model snapshot; left out'],
    [MISSING_SUB_GROUP, 'sub-group query failed; left out']
  ].sort(), 'each left-out sub-group is logged at debug')
})

t.test('issues the sub-group queries concurrently', async (t) => {
  const { sim, chain, log } = await setup(t)
  sim.hang(SUB_GROUP)
  const pending = currentEpochModels(chain, log)
  // Every sub-group request reaches the chain while none has been answered: they are in
  // flight together.
  await until(() => sim.count(SUB_GROUP) === SUB_GROUP_MODELS.length, 'every sub-group query in flight')
  t.equal(sim.count(SUB_GROUP), SUB_GROUP_MODELS.length, 'all sub-group queries in flight at once')
  sim.clearFaults() // the hung requests are cut off: each sub-group fails and is left out
  const result = await pending
  t.same(result.snapshots, [])
})

t.test('a chain with no current group (epoch 0) gives price 0 and no models, with one request', async (t) => {
  const { sim, chain, log } = await setup(t)
  for (const body of ['null', '{}', '{"epoch_group_data":null}', '{"epoch_group_data":{"sub_group_models":null}}']) {
    sim.resetCounts()
    sim.override(CURRENT, body)
    const result = await currentEpochModels(chain, log)
    t.same(result, { unitOfComputePrice: 0, snapshots: [] }, body)
    t.equal(sim.count(), 1)
  }
})

t.test('leaves out sub-groups whose answer is not a group with a snapshot object', async (t) => {
  const { sim, chain, log } = await setup(t)
  sim.override(CURRENT, { epoch_group_data: { epoch_index: '7', unit_of_compute_price: '3', sub_group_models: ['a'] } })
  for (const body of ['null', '{}', '{"epoch_group_data":null}', '{"epoch_group_data":{"model_snapshot":"x"}}']) {
    sim.override(`${SUB_GROUP}7`, body)
    const result = await currentEpochModels(chain, log)
    t.same(result, { unitOfComputePrice: 3, snapshots: [] }, body)
  }
  t.ok(sim.requests.includes(`${SUB_GROUP}7?model_id=a`), 'the parent epoch_index picks the sub-groups')
})

t.test('the parent group failing fails the whole read', async (t) => {
  const { sim, chain, log } = await setup(t)
  sim.fail(CURRENT, 14, 'node is catching up')
  await t.rejects(currentEpochModels(chain, log), { statusCode: 503, message: 'node is catching up' })
  t.equal(sim.count(SUB_GROUP), 0)
})
