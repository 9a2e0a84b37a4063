import t from 'tap'
import { startEdgeApiForClients, type EdgeApiForClients } from '../fixtures/clients/edge-api.js'
import { CURRENT_EPOCH } from '../../harness/chain-simulator/data/epochs.js'
import { EPOCHS } from '../../harness/chain-simulator/data/bls.js'
import { go, GoUnmarshalError, len, unmarshal, type GoType, type GoValue } from '../fixtures/clients/go-json.js'
import { RawNumber, type Json } from '../../scripts/compat/json.js'

// inc4/gonka-exporter-go (a Prometheus exporter), its typed decode of edge-api's answers:
// inc4/gonka-exporter-go@b159c26b346c80b6172cc0c26080c95f7180bf5a
// - internal/fetcher/fetcher.go L14-49: get(): status ≠ 200 → error, json.Unmarshal into the
//   typed struct; flexInt64 takes a JSON number or a numeric string.
// - internal/fetcher/fetcher_api.go L5-30 ParticipantEntry / FetchNetworkParticipants,
//   L31-48 PricingData, L50-67 ModelData / FetchModels, L69-114 dkgPhaseNames / FetchBLSEpoch
//   (dkg_phase: interface{}; float64 → int32, a string looked up in dkgPhaseNames, else 0).
// - internal/collector/collector.go L126-152 collectNetworkParticipants (seed.participant is the
//   address; an entry without it is skipped), L157-190 pricing, L346-358 fetchAndSetBLS.

type Struct = Record<string, GoValue>
const obj = (v: GoValue): Struct => v as Struct
const list = (v: GoValue): GoValue[] => (Array.isArray(v) ? v : [])

const ParticipantEntry = go.struct('ParticipantEntry', {
  seed: go.struct('Seed', { participant: go.string }),
  weight: go.pointer(go.float64),
  ml_nodes: go.slice(go.struct('MLNodes', {
    ml_nodes: go.slice(go.struct('MLNode', { node_id: go.string, poc_weight: go.pointer(go.float64) }))
  }))
})
const NetworkParticipants = go.struct('', { active_participants: go.struct('ActiveParticipants', { participants: go.slice(ParticipantEntry) }) })

const PricingData = go.struct('PricingData', {
  unit_of_compute_price: go.pointer(go.float64),
  dynamic_pricing_enabled: go.pointer(go.bool),
  models: go.slice(go.struct('Model', {
    id: go.string,
    price_per_token: go.pointer(go.float64),
    units_of_compute_per_token: go.pointer(go.float64),
    utilization: go.pointer(go.float64),
    capacity: go.pointer(go.int64)
  }))
})

const ModelData = go.struct('ModelData', {
  models: go.slice(go.struct('Model', {
    id: go.string,
    v_ram: go.pointer(go.float64),
    throughput_per_nonce: go.pointer(go.float64),
    validation_threshold: go.pointer(go.struct('ValidationThreshold', { value: go.float64, exponent: go.int }))
  }))
})

/** fetcher.go flexInt64.UnmarshalJSON: an int64, else a string holding one. */
const flexInt64: GoType = {
  kind: 'unmarshaler',
  name: 'flexInt64',
  unmarshal: (raw: Json) => {
    if (raw === null) return 0n
    const text = raw instanceof RawNumber ? raw.text : typeof raw === 'string' ? raw : undefined
    if (text === undefined || !/^-?\d+$/.test(text)) throw new GoUnmarshalError(`json: cannot unmarshal into flexInt64: ${JSON.stringify(raw)}`)
    return BigInt(text)
  }
}
const BLSEpoch = go.struct('', {
  epoch_data: go.struct('EpochData', { dkg_phase: go.any, dealing_phase_deadline_block: flexInt64, verifying_phase_deadline_block: flexInt64 })
})
/** fetcher_api.go dkgPhaseNames: the exporter knows the names up to SIGNED. */
const DKG_PHASE_NAMES: Record<string, number> = {
  DKG_PHASE_UNDEFINED: 0, DKG_PHASE_DEALING: 1, DKG_PHASE_VERIFYING: 2, DKG_PHASE_COMPLETED: 3, DKG_PHASE_FAILED: 4, DKG_PHASE_SIGNED: 5
}

/** fetcher.go get(): a non-200 status is an error, then json.Unmarshal into the typed struct. */
async function fetchTyped (edge: EdgeApiForClients, path: string, type: GoType): Promise<GoValue> {
  const res = await edge.get(path)
  if (res.status !== 200) throw new Error(`HTTP ${res.status}`)
  return unmarshal(res.text, type)
}

/** FetchBLSEpoch → the bls_dkg_phase gauge's value. */
async function dkgPhase (edge: EdgeApiForClients, epoch: number): Promise<number> {
  const phase = obj(obj(await fetchTyped(edge, `/v1/bls/epoch/${epoch}`, BLSEpoch)).epoch_data).dkg_phase
  if (typeof phase === 'number') return Math.trunc(phase)
  return typeof phase === 'string' ? DKG_PHASE_NAMES[phase] ?? 0 : 0
}

t.test('collectNetworkParticipants: the typed decode succeeds and sets weight and per-node PoC weight by seed address', async (t) => {
  const edge = await startEdgeApiForClients(t)
  const participants = list(obj(obj(await fetchTyped(edge, '/v1/epochs/current/participants', NetworkParticipants)).active_participants).participants)
  t.equal(participants.length, 3, 'net_total_participant_count')
  const weights: Record<string, number> = {}
  const nodes: Record<string, number> = {}
  for (const p of participants.map(obj)) {
    const addr = obj(p.seed).participant as string
    if (addr === '') continue
    if (p.weight !== null) weights[addr] = p.weight as number
    for (const group of list(p.ml_nodes).map(obj)) {
      for (const node of list(group.ml_nodes).map(obj)) {
        if (node.node_id !== '' && node.poc_weight !== null) nodes[`${addr}/${node.node_id as string}`] = node.poc_weight as number
      }
    }
  }
  t.same(weights, { gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr: 1250, gonka1g9n2kwfe3mxnyl6j7v0y4l0q8zp5hsyw3dkq7v: 980 },
    'the participant without a seed is skipped, as the exporter skips it')
  t.same(nodes, {
    'gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr/node-a': 700,
    'gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr/node-b': 550,
    'gonka1g9n2kwfe3mxnyl6j7v0y4l0q8zp5hsyw3dkq7v/gpu-0': 980
  })
})

t.test('collectPricingAndModels: pricing decodes; /v1/models decodes to no models (the exporter expects {"models": …})', async (t) => {
  const edge = await startEdgeApiForClients(t)
  const pricing = obj(await fetchTyped(edge, '/v1/pricing', PricingData))
  t.equal(pricing.unit_of_compute_price, 100)
  t.equal(pricing.dynamic_pricing_enabled, false)
  t.same(list(pricing.models).map((m) => [obj(m).id, obj(m).price_per_token, obj(m).units_of_compute_per_token]), [
    ['Qwen/Qwen3-235B-A22B-Instruct-2507-FP8', 100000, 1000], ['Qwen/QwQ-32B', 15000, 150], ['gonka/inference-test-8b', 4000, 40]
  ])
  // A client/server mismatch that Go's edge-api has too: /v1/models is OpenAI's {object, data}.
  // It is no error, so the exporter just sets no model gauges; not changed here.
  t.equal(len(obj(await fetchTyped(edge, '/v1/models', ModelData)).models), 0)
})

t.test('fetchAndSetBLS: the DKG phase gauge is the chain\'s phase, DISPUTING included', async (t) => {
  const edge = await startEdgeApiForClients(t)
  t.equal(await dkgPhase(edge, 7), 3, 'DKG_PHASE_COMPLETED')
  // The exporter asks for the chain's current epoch. The dispute phase came after its
  // dkgPhaseNames table: as a name it would read 0 (UNDEFINED); as a number it reads 6.
  edge.sim.override(`/productscience/inference/bls/epoch_data/${CURRENT_EPOCH}`, {
    epoch_data: { ...(EPOCHS[7] as { epoch_data: object }).epoch_data, epoch_id: String(CURRENT_EPOCH), dkg_phase: 'DKG_PHASE_DISPUTING' }
  })
  t.equal(await dkgPhase(edge, CURRENT_EPOCH), 6, 'DKG_PHASE_DISPUTING')
  const deadlines = obj(obj(await fetchTyped(edge, `/v1/bls/epoch/${CURRENT_EPOCH}`, BLSEpoch)).epoch_data)
  t.equal(deadlines.dealing_phase_deadline_block, 1843120n)
  t.equal(deadlines.verifying_phase_deadline_block, 1843125n)
})

t.test('the Go decode this test relies on fails where encoding/json fails', async (t) => {
  t.throws(() => unmarshal('{"weight":"1250"}', ParticipantEntry), /cannot unmarshal string into Go struct field ParticipantEntry\.weight of type float64/)
  t.throws(() => unmarshal('{"capacity":1.5}', go.struct('M', { capacity: go.pointer(go.int64) })), /cannot unmarshal number/)
  t.throws(() => unmarshal('{"n":18446744073709551616}', go.struct('M', { n: go.uint64 })), /cannot unmarshal number/, 'beyond uint64')
  t.equal(obj(unmarshal('{"n":18446744073709551615}', go.struct('M', { n: go.uint64 }))).n, 2n ** 64n - 1n)
  t.throws(() => unmarshal('{"epoch_data":{"dealing_phase_deadline_block":true}}', BLSEpoch), /flexInt64/)
  t.same(obj(unmarshal('{"ml_nodes":null,"weight":null}', ParticipantEntry)), { seed: { participant: '' }, weight: null, ml_nodes: null }, 'null: a nil slice and a nil pointer')
  t.equal(obj(unmarshal('{"WEIGHT":2}', ParticipantEntry)).weight, 2, 'keys match case-insensitively')
  t.throws(() => unmarshal('{', ParticipantEntry), /invalid character/, 'not JSON')
})
