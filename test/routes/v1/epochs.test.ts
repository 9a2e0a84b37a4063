import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'
import { EPOCH_INFO, EPOCH_PARAMS, NEWER_CHAIN_RECIPE } from '../../../harness/chain-simulator/data/epochs.js'

const EPOCH_INFO_PATH = '/productscience/inference/inference/epoch_info'

// One app and simulator for the whole file (building an app compiles every route's schemas,
// slow on a loaded machine); each test starts with no faults, overrides or counts.
const { app, sim } = await buildTestApp(t)
t.beforeEach(async () => {
  sim.clearFaults()
  sim.resetCounts()
})

t.test('GET /v1/epochs/latest computes phase and stages from EpochInfo', async (t) => {
  const res = await app.inject('/v1/epochs/latest')
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(Object.keys(body), [
    'block_height', 'latest_epoch', 'phase', 'epoch_stages', 'next_epoch_stages', 'epoch_params',
    'is_confirmation_poc_active', 'active_confirmation_poc_event'
  ], 'Go\'s field order')
  t.equal(body.block_height, 1843210)
  t.same(body.latest_epoch, { index: 42, poc_start_block_height: 1842000 })
  t.equal(body.phase, 'Inference', '1210 blocks after the PoC start')
  t.same(body.epoch_stages, {
    epoch_index: 42,
    poc_start: 1842000,
    poc_generation_wind_down: 1842048,
    poc_generation_end: 1842060,
    poc_validation_start: 1842065,
    poc_validation_wind_down: 1842161,
    poc_validation_end: 1842185,
    set_new_validators: 1842305,
    claim_money: 1842306,
    inference_validation_cutoff: 1857311,
    next_poc_start: 1857391,
    poc_exchange_window: { start: 1842001, end: 1842065 },
    poc_validation_exchange_window: { start: 1842066, end: 1842185 }
  })
  t.equal(body.next_epoch_stages.epoch_index, 43)
  t.equal(body.next_epoch_stages.poc_start, 1857391)
  t.same(body.epoch_params, {
    epoch_length: 15391,
    epoch_multiplier: 1,
    epoch_shift: 16980,
    default_unit_of_compute_price: 100,
    poc_stage_duration: 60,
    poc_exchange_duration: 5,
    poc_validation_delay: 5,
    poc_validation_duration: 120,
    set_new_validators_delay: 120,
    inference_validation_cutoff: 80,
    inference_pruning_epoch_threshold: 2,
    poc_slot_allocation: { value: 5, exponent: -1 },
    confirmation_poc_safety_window: 500
  }, 'only EpochParams, numbers, zero values left out')
  t.notOk('epoch_params' in body.epoch_params, 'not the full Params')
  t.equal(body.is_confirmation_poc_active, true)
  t.same(body.active_confirmation_poc_event, {
    epoch_index: 42,
    event_sequence: 0,
    trigger_height: 1843100,
    generation_start_height: 1843110,
    phase: 'CONFIRMATION_POC_GENERATION',
    poc_seed_block_hash: EPOCH_INFO.active_confirmation_poc_event.poc_seed_block_hash
  }, 'protoToAPIJSON: phase as its name, zero fields kept; v0.2.14 has no recipe, so no key')
  t.match(res.body, /"active_confirmation_poc_event":\{"epoch_index":42,"event_sequence":0,"trigger_height":1843100,/, 'Go\'s field order')
  t.equal(sim.count(), 1, 'one chain request')
})

t.test('the phase follows the block height', async (t) => {
  for (const [height, phase] of [['1841999', 'Inference'], ['1842000', 'PoCGenerate'], ['1842048', 'PoCGenerateWindDown'], ['1842065', 'PoCValidate'], ['1842161', 'PoCValidateWindDown'], ['1842185', 'Inference']]) {
    sim.override(EPOCH_INFO_PATH, { ...EPOCH_INFO, block_height: height })
    const res = await app.inject('/v1/epochs/latest')
    t.equal(res.json().phase, phase, `height ${height}`)
  }
})

t.test('no active confirmation PoC event: the key is absent', async (t) => {
  sim.override(EPOCH_INFO_PATH, { ...EPOCH_INFO, is_confirmation_poc_active: false, active_confirmation_poc_event: null })
  const res = await app.inject('/v1/epochs/latest')
  t.equal(res.statusCode, 200)
  t.equal(res.json().is_confirmation_poc_active, false)
  t.notOk('active_confirmation_poc_event' in res.json())
})

t.test('a sparse confirmation PoC event: every field present with its default, no recipe key', async (t) => {
  sim.override(EPOCH_INFO_PATH, JSON.stringify({ ...EPOCH_INFO, active_confirmation_poc_event: { epoch_index: '18446744073709551615', phase: 4 } }))
  const res = await app.inject('/v1/epochs/latest')
  t.equal(res.statusCode, 200)
  t.match(res.body, /"active_confirmation_poc_event":\{"epoch_index":18446744073709551615,"event_sequence":0,"trigger_height":0,"generation_start_height":0,"phase":"4","poc_seed_block_hash":""\}/,
    'an enum number the names lack is written as it came (the schema types phase a string)')
})

t.test('a newer chain\'s event with a recipe: the recipe as protoToAPIJSON writes it, null when the chain sends null', async (t) => {
  const event = EPOCH_INFO.active_confirmation_poc_event
  sim.override(EPOCH_INFO_PATH, { ...EPOCH_INFO, active_confirmation_poc_event: { ...event, recipe: NEWER_CHAIN_RECIPE } })
  t.same((await app.inject('/v1/epochs/latest')).json().active_confirmation_poc_event.recipe, {
    stage_height: 1843110,
    scheme: 'POC_SCHEME_PREFILL',
    tracking: false,
    poc_stronger_rng_enabled: true,
    models: [{
      model_id: 'Qwen/Qwen3-32B',
      seq_len: 1024,
      stat_test: { dist_threshold: { value: 4, exponent: -1 }, p_mismatch: { value: 1, exponent: -1 }, p_value_threshold: { value: 5, exponent: -2 } },
      weight_scale_factor: { value: 1, exponent: 0 },
      penalty_start_epoch: 0
    }]
  }, 'the recipe\'s integers as numbers, the rest as the chain sent it')
  sim.override(EPOCH_INFO_PATH, { ...EPOCH_INFO, active_confirmation_poc_event: { ...event, recipe: null } })
  const res = await app.inject('/v1/epochs/latest')
  t.match(res.body, /"poc_seed_block_hash":"[0-9A-F]+","recipe":null\}/, 'an unset recipe of a chain that has the field: null, as protojson writes it')
})

t.test('epoch 0 (genesis): Inference, stages zero except next_poc_start', async (t) => {
  sim.override(EPOCH_INFO_PATH, { ...EPOCH_INFO, block_height: '30', latest_epoch: { index: '0', poc_start_block_height: '0' } })
  const body = (await app.inject('/v1/epochs/latest')).json()
  t.equal(body.phase, 'Inference')
  t.equal(body.epoch_stages.poc_start, 0)
  t.equal(body.epoch_stages.next_poc_start, -1589)
  t.equal(body.next_epoch_stages.epoch_index, 1)
  t.equal(body.next_epoch_stages.poc_start, -1589)
})

t.test('64-bit values survive exactly', async (t) => {
  // A raw body: JSON.stringify could not carry these exactly, the gateway sends strings anyway.
  sim.override(EPOCH_INFO_PATH, JSON.stringify({
    ...EPOCH_INFO,
    block_height: '9223372036854775807',
    latest_epoch: { index: '18446744073709551615', poc_start_block_height: '9223372036854775000' },
    params: { epoch_params: { ...EPOCH_PARAMS, epoch_length: '9223372036854775807', inference_pruning_epoch_threshold: '18446744073709551615' } }
  }))
  const res = await app.inject('/v1/epochs/latest')
  t.equal(res.statusCode, 200)
  t.match(res.body, /^\{"block_height":9223372036854775807,"latest_epoch":\{"index":18446744073709551615,"poc_start_block_height":9223372036854775000\}/)
  t.match(res.body, /"epoch_stages":\{"epoch_index":18446744073709551615,"poc_start":9223372036854775000,"poc_generation_wind_down":9223372036854775048,/)
  t.match(res.body, /"next_epoch_stages":\{"epoch_index":0,/, 'the uint64 index wraps as in Go')
  t.match(res.body, /"epoch_length":9223372036854775807,/)
  t.match(res.body, /"inference_pruning_epoch_threshold":18446744073709551615,/)
})

t.test('EpochInfo without epoch params: 500 epoch params missing', async (t) => {
  for (const params of [{ epoch_params: null }, {}, null]) {
    sim.override(EPOCH_INFO_PATH, { ...EPOCH_INFO, params })
    const res = await app.inject('/v1/epochs/latest')
    t.equal(res.statusCode, 500)
    t.same(res.json(), { message: 'epoch params missing' })
  }
})

t.test('a sparse EpochInfo still answers, with Go\'s zero defaults', async (t) => {
  sim.override(EPOCH_INFO_PATH, { params: { epoch_params: {} } })
  const res = await app.inject('/v1/epochs/latest')
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.equal(body.block_height, 0)
  t.same(body.latest_epoch, { index: 0, poc_start_block_height: 0 })
  t.same(body.epoch_params, {})
  t.equal(body.is_confirmation_poc_active, false)
})

t.test('anything but "latest" is 400 before any chain request', async (t) => {
  for (const epoch of ['1', 'current', 'LATEST', 'latest2', 'latest%2F..', '%20latest']) {
    const res = await app.inject(`/v1/epochs/${epoch}`)
    t.equal(res.statusCode, 400, epoch)
    t.same(res.json(), { message: 'Only getting info for current epoch is supported at the moment' })
  }
  t.equal(sim.count(), 0)
})

t.test('chain errors are mapped', async (t) => {
  for (const [code, status] of [[5, 404], [14, 503], [13, 500]] as const) {
    sim.clearFaults()
    sim.fail(EPOCH_INFO_PATH, code, `epoch info said ${code}`)
    const res = await app.inject('/v1/epochs/latest')
    t.equal(res.statusCode, status, `gRPC ${code}`)
    t.same(res.json(), { message: `epoch info said ${code}` })
  }
  sim.clearFaults()
  await sim.refuse()
  t.teardown(() => sim.restore())
  const res = await app.inject('/v1/epochs/latest')
  t.equal(res.statusCode, 503)
  t.same(res.json(), { message: 'chain unavailable' })
})

t.test('a chain slower than the timeout is 504', async (t) => {
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CHAIN_TIMEOUT: '50ms' } })
  sim.hang(EPOCH_INFO_PATH)
  const res = await app.inject('/v1/epochs/latest')
  t.equal(res.statusCode, 504)
  t.same(res.json(), { message: 'chain query timed out' })
})
