import t from 'tap'
import { startEdgeApiForClients, type EdgeApiForClients } from '../fixtures/clients/edge-api.js'
import { ACTIVE_PARTICIPANTS, CURRENT_EPOCH, encodeActiveParticipants } from '../../harness/chain-simulator/data/epochs.js'
import { add, eq, get, item, iter, loads, PyError, sub, zip, type PyValue } from '../fixtures/clients/python.js'

// 6block/gonkascan's backend (the explorer; gonka-ai/gonka-tracker and DimaOrekhovPS/gonkascan
// share these call sites), Python with httpx, as it reads edge-api:
// 6block/gonkascan@8485c169bf545846763f680cd6e4f367cc6f8d82
// - backend/src/backend/client.py L70-99: GET, raise_for_status(), response.json();
//   /v1/epochs/current/participants, /v1/epochs/{epoch_id}/participants, /v1/epochs/latest.
// - backend/src/backend/service.py L107-128 _calculate_weight_to_confirm, _extract_ml_nodes_map;
//   L264-290 get_canonical_height (effective_block_height - 10, next_poc_start - 10);
//   L380-400 the current epoch's participant rows (epoch_group_id, p["index"],
//   p.get("seed", {}).get("signature"), p.get("ml_nodes", [])); L446-458 epoch_id ==
//   latest_epoch.index, then epoch_stages / next_epoch_stages / block_height;
//   L1085-1096 poll_participant_rewards (epoch_group_id - offset);
//   L1646-1662 get_current_models (zip(models, ml_nodes), poc_weight sums).
// The Python semantics (KeyError, None.get, str - int) are in test/fixtures/clients/python.ts.

/** client._make_request: raise_for_status, then response.json(). */
async function request (edge: EdgeApiForClients, path: string): Promise<PyValue> {
  const res = await edge.get(path)
  if (res.status >= 400) throw new PyError(`httpx.HTTPStatusError: ${res.status}`)
  return loads(res.text)
}

/** service.py L109-117 */
function calculateWeightToConfirm (mlNodesData: PyValue): number {
  let weight = 0
  for (const group of iter(mlNodesData)) {
    for (const node of iter(get(group, 'ml_nodes', []))) {
      const allocation = iter(get(node, 'timeslot_allocation', []))
      if (allocation.length > 1 && allocation[1] === false) weight = add(weight, get(node, 'poc_weight', 0))
    }
  }
  return weight
}

/** service.py L120-128 */
function extractMlNodesMap (mlNodesData: PyValue): Record<string, PyValue> {
  const result: Record<string, PyValue> = {}
  for (const wrapper of iter(mlNodesData)) {
    for (const node of iter(get(wrapper, 'ml_nodes', []))) {
      const nodeId = get(node, 'node_id')
      if (typeof nodeId === 'string' && nodeId !== '') {
        const pocWeight = get(node, 'poc_weight')
        if (pocWeight !== null) result[nodeId] = pocWeight
      }
    }
  }
  return result
}

/** service.py L380-400: the rows the explorer stores for the current epoch. */
function participantRows (epochData: PyValue): Record<string, Record<string, PyValue>> {
  const rows: Record<string, Record<string, PyValue>> = {}
  for (const p of iter(item(item(epochData, 'active_participants'), 'participants'))) {
    rows[item(p, 'index') as string] = {
      weight: get(p, 'weight', 0),
      models: get(p, 'models', []),
      validator_key: get(p, 'validator_key'),
      seed_signature: get(get(p, 'seed', {}), 'signature'),
      ml_nodes_map: extractMlNodesMap(get(p, 'ml_nodes', []))
    }
  }
  return rows
}

/** service.py L1646-1662 get_current_models: each model's summed PoC weight and participants. */
function currentModels (epochData: PyValue): Record<string, { weight: number, participants: number }> {
  const weights: Record<string, number> = {}
  const counts: Record<string, Set<string>> = {}
  for (const participant of iter(item(item(epochData, 'active_participants'), 'participants'))) {
    const index = item(participant, 'index') as string
    for (const [model, entry] of zip(get(participant, 'models', []), get(participant, 'ml_nodes', []))) {
      const key = model as string
      weights[key] ??= 0
      counts[key] ??= new Set()
      for (const node of iter(get(entry, 'ml_nodes', []))) weights[key] = add(weights[key], get(node, 'poc_weight', 0))
      counts[key].add(index)
    }
  }
  return Object.fromEntries(Object.entries(weights).map(([m, w]) => [m, { weight: w, participants: (counts[m] as Set<string>).size }]))
}

t.test('the current epoch: rows, ML-node maps, weight to confirm and per-model weights as gonkascan computes them', async (t) => {
  const edge = await startEdgeApiForClients(t)
  const epochData = await request(edge, '/v1/epochs/current/participants')
  const epochId = item(item(epochData, 'active_participants'), 'epoch_group_id')
  t.equal(epochId, CURRENT_EPOCH)

  const rows = participantRows(epochData)
  const [first, second, third] = ACTIVE_PARTICIPANTS.participants.map((p) => rows[p.index] as Record<string, PyValue>)
  t.same(first, {
    weight: 1250,
    models: ['Qwen/Qwen3-32B', 'Qwen/Qwen3-235B-A22B-Instruct-2507-FP8'],
    validator_key: ACTIVE_PARTICIPANTS.participants[0]?.validator_key,
    seed_signature: 'c2lnbmF0dXJlLTE=',
    ml_nodes_map: { 'node-a': 700, 'node-b': 550 }
  })
  t.same(second?.ml_nodes_map, { 'gpu-0': 980 })
  t.same(third, { weight: 410, models: [], validator_key: 'not-a-base64-key!', seed_signature: null, ml_nodes_map: {} },
    'a participant without models or seed: p.get("seed", {}) works because seed is left out, never null')

  const participants = iter(item(item(epochData, 'active_participants'), 'participants'))
  t.same(participants.map((p) => calculateWeightToConfirm(get(p, 'ml_nodes', []))), [700, 0, 0], 'timeslot_allocation[1] == False')
  t.same(currentModels(epochData), {
    'Qwen/Qwen3-32B': { weight: 700 + 980, participants: 2 },
    'Qwen/Qwen3-235B-A22B-Instruct-2507-FP8': { weight: 550, participants: 1 }
  }, 'zip(models, ml_nodes): one ML-node group per model, in the same order')

  // poll_participant_rewards: check_epoch = current_epoch - epoch_offset
  t.same([1, 2, 3, 4, 5, 6].map((offset) => sub(epochId, offset)), [41, 40, 39, 38, 37, 36])
})

t.test('the latest epoch against the current one: same JSON type, stage arithmetic', async (t) => {
  const edge = await startEdgeApiForClients(t)
  const epochData = await request(edge, '/v1/epochs/current/participants')
  const latestInfo = await request(edge, '/v1/epochs/latest')
  const epochId = item(item(epochData, 'active_participants'), 'epoch_group_id')
  t.ok(eq(epochId, item(item(latestInfo, 'latest_epoch'), 'index')), 'epoch_id == latest_epoch_index: a number on both sides')
  t.ok(sub(item(item(latestInfo, 'epoch_stages'), 'next_poc_start'), 10) > 0, 'canonical_height = next_poc_start - 10')
  t.type(item(item(latestInfo, 'next_epoch_stages'), 'set_new_validators'), 'number')
  t.type(item(latestInfo, 'block_height'), 'number')
  const effective = item(item(await request(edge, `/v1/epochs/${CURRENT_EPOCH}/participants`), 'active_participants'), 'effective_block_height')
  t.ok(sub(effective, 10) > 0, 'get_canonical_height: effective_block_height arithmetic on the numeric epoch route')
})

t.test('an epoch without participants: gonkascan indexes active_participants["participants"] without a guard', async (t) => {
  const edge = await startEdgeApiForClients(t)
  const empty = { ...ACTIVE_PARTICIPANTS, participants: [], created_at_block_height: 0n }
  edge.sim.override('/cosmos/base/tendermint/v1beta1/abci_query', { code: 0, value: Buffer.from(encodeActiveParticipants(empty)).toString('base64') })
  const epochData = await request(edge, '/v1/epochs/current/participants')
  t.same(participantRows(epochData), {}, 'no KeyError: participants is []')
  t.same(currentModels(epochData), {})
})

t.test('the Python semantics this test relies on raise where Python raises', async (t) => {
  t.throws(() => item({}, 'participants'), new PyError("KeyError: 'participants'"))
  t.throws(() => get(null, 'signature'), /AttributeError: 'NoneType' object has no attribute 'get'/, '"seed": null would break the rows')
  t.throws(() => zip(null, []), /TypeError: 'NoneType' object is not iterable/, '"ml_nodes": null would break get_current_models')
  t.throws(() => sub('1857391', 10), /TypeError: unsupported operand type\(s\) for -: 'str' and 'int'/, 'a 64-bit integer as a string would break the stage arithmetic')
  t.notOk(eq(42, '42'), '42 == "42" is False in Python')
  t.throws(() => item([], 0), /IndexError/)
  t.throws(() => item('text', 'k'), /TypeError: 'str' object is not subscriptable/)
})
