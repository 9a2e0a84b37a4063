import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'
import type { ChainSimulator } from '../../../harness/chain-simulator/simulator.js'
import { GOV_AUTHORITY, MODELS, SUB_GROUP_MODELS, UNIT_OF_COMPUTE_PRICE } from '../../../harness/chain-simulator/data/models.js'

const CURRENT = '/productscience/inference/inference/current_epoch_group_data'
const SUB_GROUP = '/productscience/inference/inference/epoch_group_data/'
const MODELS_ALL = '/productscience/inference/inference/models_all'
const UINT64_MAX = '18446744073709551615'
const INT64_MAX = '9223372036854775807'

/** One /v1/models entry as the Go service wrote it, key order included. */
function descriptor (id: string, hf: string, context: string, created: number): string {
  const huggingFace = hf === '' ? '' : `"hugging_face_id":${JSON.stringify(hf)},`
  return `{"object":"model","id":${JSON.stringify(id)},${huggingFace}"name":${JSON.stringify(id)},"created":${created},` +
    `"input_modalities":["text"],"output_modalities":["text"],"context_length":${context},"max_output_length":${context}}`
}

/** A current epoch whose only sub-group has `snapshot` (raw JSON text, so any number stays exact). */
function oneModelEpoch (sim: ChainSimulator, price: string, snapshot: string): void {
  sim.override(CURRENT, `{"epoch_group_data":{"epoch_index":"9","unit_of_compute_price":"${price}","sub_group_models":["big"]}}`)
  sim.override(`${SUB_GROUP}9`, `{"epoch_group_data":{"model_id":"big","model_snapshot":${snapshot}}}`)
}

t.test('GET /v1/models lists the current epoch models that have a snapshot, OpenAI-style', async (t) => {
  const { app, sim, logs } = await buildTestApp(t)
  const before = Math.floor(Date.now() / 1000)
  const res = await app.inject('/v1/models')
  const after = Math.floor(Date.now() / 1000)
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const created = res.json().data[0].created as number
  t.ok(created >= before && created <= after, 'created is the request time in unix seconds')
  t.equal(res.body, `{"object":"list","data":[${[
    descriptor(MODELS[0].id, MODELS[0].hf_repo, MODELS[0].context_window, created),
    descriptor(MODELS[1].id, MODELS[1].hf_repo, MODELS[1].context_window, created),
    descriptor(MODELS[2].id, '', MODELS[2].context_window, created)
  ].join(',')}]}`, 'exact body: one created for all, hugging_face_id only with an hf_repo, skipped sub-groups absent')
  t.equal(sim.count(CURRENT), 1)
  t.equal(sim.count(), 1 + SUB_GROUP_MODELS.length, 'one chain request for the parent, one per sub-group')
  t.equal(logs.filter((l) => l.level === 20 && typeof l.modelId === 'string').length, 2, 'both skipped sub-groups logged at debug')
})

t.test('GET /v1/models keeps a uint64 context window exact', async (t) => {
  const { app, sim } = await buildTestApp(t)
  oneModelEpoch(sim, '1', `{"id":"big","hf_repo":"","context_window":"${UINT64_MAX}"}`)
  const res = await app.inject('/v1/models')
  t.equal(res.statusCode, 200)
  t.match(res.body, `"context_length":${UINT64_MAX},"max_output_length":${UINT64_MAX}}`)
})

t.test('GET /v1/models answers an empty list, never null', async (t) => {
  const { app, sim } = await buildTestApp(t)
  for (const parent of ['{"epoch_group_data":{"sub_group_models":[]}}', '{"epoch_group_data":{}}']) {
    sim.resetCounts()
    sim.override(CURRENT, parent)
    const res = await app.inject('/v1/models')
    t.equal(res.statusCode, 200)
    t.equal(res.body, '{"object":"list","data":[]}', parent)
    t.equal(sim.count(), 1)
  }
  sim.clearFaults()
  sim.fail(SUB_GROUP, 13, 'store corrupted')
  const res = await app.inject('/v1/models')
  t.equal(res.body, '{"object":"list","data":[]}', 'every sub-group failing leaves an empty list')
})

t.test('GET /v1/pricing prices every current model: units × unit_of_compute_price', async (t) => {
  const { app, sim } = await buildTestApp(t)
  const res = await app.inject('/v1/pricing')
  t.equal(res.statusCode, 200)
  const price = Number(UNIT_OF_COMPUTE_PRICE)
  const entries = MODELS.map((m) => `{"id":${JSON.stringify(m.id)},"units_of_compute_per_token":${m.units_of_compute_per_token},"price_per_token":${Number(m.units_of_compute_per_token) * price}}`)
  t.equal(res.body, `{"unit_of_compute_price":${price},"models":[${entries.join(',')}],"dynamic_pricing_enabled":false}`)
  t.equal(sim.count(), 1 + SUB_GROUP_MODELS.length)
})

t.test('GET /v1/pricing is exact beyond 2^53', async (t) => {
  const { app, sim } = await buildTestApp(t)

  await t.test('int64 max price × 2 units fits uint64 exactly', async (t) => {
    oneModelEpoch(sim, INT64_MAX, '{"id":"big","units_of_compute_per_token":"2"}')
    const res = await app.inject('/v1/pricing')
    t.equal(res.body, `{"unit_of_compute_price":${INT64_MAX},"models":[{"id":"big","units_of_compute_per_token":2,"price_per_token":18446744073709551614}],"dynamic_pricing_enabled":false}`)
  })

  await t.test('a product beyond 64 bits is given exactly, not wrapped', async (t) => {
    oneModelEpoch(sim, INT64_MAX, `{"id":"big","units_of_compute_per_token":"${UINT64_MAX}"}`)
    const res = await app.inject('/v1/pricing')
    const product = (BigInt(UINT64_MAX) * BigInt(INT64_MAX)).toString()
    t.match(res.body, `"units_of_compute_per_token":${UINT64_MAX},"price_per_token":${product}}`)
  })

  await t.test('a negative chain price reads as Go\'s uint64(price)', async (t) => {
    oneModelEpoch(sim, '-1', '{"id":"big","units_of_compute_per_token":"1"}')
    const res = await app.inject('/v1/pricing')
    t.match(res.body, `{"unit_of_compute_price":${UINT64_MAX},"models":[{"id":"big","units_of_compute_per_token":1,"price_per_token":${UINT64_MAX}}]`)
  })

  await t.test('a snapshot without id or units prices as "" and 0', async (t) => {
    oneModelEpoch(sim, '5', '{}')
    const res = await app.inject('/v1/pricing')
    t.equal(res.body, '{"unit_of_compute_price":5,"models":[{"id":"","units_of_compute_per_token":0,"price_per_token":0}],"dynamic_pricing_enabled":false}')
    const models = await app.inject('/v1/models')
    t.match(models.body, '"id":"","name":"","created":')
  })
})

t.test('GET /v1/pricing in epoch 0 (no current group) answers price 0 and no models', async (t) => {
  const { app, sim } = await buildTestApp(t)
  for (const body of ['{"epoch_group_data":{}}', '{}', 'null']) {
    sim.override(CURRENT, body)
    const res = await app.inject('/v1/pricing')
    t.equal(res.statusCode, 200)
    t.equal(res.body, '{"unit_of_compute_price":0,"models":[],"dynamic_pricing_enabled":false}', body)
  }
})

t.test('GET /v1/governance/models answers every model in the legacy Go shape', async (t) => {
  const { app, sim } = await buildTestApp(t)
  const res = await app.inject('/v1/governance/models')
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.equal(body.models.length, MODELS.length)
  t.same(body.models[2], {
    proposed_by: GOV_AUTHORITY,
    id: 'gonka/inference-test-8b',
    units_of_compute_per_token: 40,
    context_window: 32768
  }, 'zero values and the unset validation_threshold are omitted, as omitempty did')
  t.match(res.body, '{"models":[{"proposed_by":"' + GOV_AUTHORITY + '","id":"Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",' +
    '"units_of_compute_per_token":1000,"context_window":240000,"quantization":"FP8",' +
    '"hf_repo":"Qwen/Qwen3-235B-A22B-Instruct-2507-FP8","hf_commit":"' + MODELS[0].hf_commit + '",' +
    '"model_args":["--max-model-len","240000","--tensor-parallel-size","4","--enable-expert-parallel"],' +
    '"v_ram":640,"throughput_per_nonce":8000,"validation_threshold":{"value":970,"exponent":-3}}', 'proto field order, numbers not strings')
  t.equal(sim.count(), 1)
  t.equal(sim.count(MODELS_ALL), 1)
})

t.test('GET /v1/governance/models-legacy answers the same models under "model"', async (t) => {
  const { app } = await buildTestApp(t)
  const [current, legacy] = await Promise.all([app.inject('/v1/governance/models'), app.inject('/v1/governance/models-legacy')])
  t.equal(legacy.statusCode, 200)
  t.same(Object.keys(legacy.json()), ['model'])
  t.equal(legacy.body, current.body.replace('{"models":', '{"model":'))
})

t.test('GET /v1/governance/models keeps 64-bit fields exact', async (t) => {
  const { app, sim } = await buildTestApp(t)
  sim.override(MODELS_ALL, `{"model":[{"id":"big","context_window":"${UINT64_MAX}","v_ram":"${UINT64_MAX}",` +
    `"validation_threshold":{"value":"${INT64_MAX}","exponent":-18}}],"pagination":null}`)
  const res = await app.inject('/v1/governance/models')
  t.equal(res.body, `{"models":[{"id":"big","context_window":${UINT64_MAX},"v_ram":${UINT64_MAX},"validation_threshold":{"value":${INT64_MAX},"exponent":-18}}]}`)
})

t.test('GET /v1/governance/models keeps a set but zero threshold as {}, like a non-nil Go pointer', async (t) => {
  const { app, sim } = await buildTestApp(t)
  sim.override(MODELS_ALL, { model: [{ id: 'm', validation_threshold: { value: '0', exponent: 0 } }] })
  const res = await app.inject('/v1/governance/models')
  t.equal(res.body, '{"models":[{"id":"m","validation_threshold":{}}]}')
})

t.test('GET /v1/governance/models answers [] when the chain has none (Go: null; docs/clients.md), the legacy route null as Go', async (t) => {
  const { app, sim } = await buildTestApp(t)
  for (const body of ['{"model":[],"pagination":{"next_key":null,"total":"0"}}', '{}', 'null']) {
    sim.override(MODELS_ALL, body)
    t.equal((await app.inject('/v1/governance/models')).body, '{"models":[]}', body)
    t.equal((await app.inject('/v1/governance/models-legacy')).body, '{"model":null}', body)
  }
})

const ROUTES = [
  ['/v1/models', CURRENT],
  ['/v1/pricing', CURRENT],
  ['/v1/governance/models', MODELS_ALL],
  ['/v1/governance/models-legacy', MODELS_ALL]
] as const

t.test('chain gateway errors map to their HTTP status with the chain message', async (t) => {
  const { app, sim } = await buildTestApp(t)
  for (const [route, chainPath] of ROUTES) {
    for (const [code, status] of [[5, 404], [3, 400], [8, 429], [14, 503], [13, 500]] as const) {
      sim.clearFaults()
      sim.resetCounts()
      sim.fail(chainPath, code, `chain said ${code}`)
      const res = await app.inject(route)
      t.equal(res.statusCode, status, `${route}: gRPC ${code} → ${status}`)
      t.same(res.json(), { message: `chain said ${code}` })
      t.equal(sim.count(), 1, 'no sub-group query after the parent failed')
    }
  }
})

t.test('a refused chain answers 503 chain unavailable', async (t) => {
  const { app, sim } = await buildTestApp(t)
  await sim.refuse()
  for (const [route] of ROUTES) {
    const res = await app.inject(route)
    t.equal(res.statusCode, 503, route)
    t.same(res.json(), { message: 'chain unavailable' })
  }
})

t.test('a chain that does not answer in EDGE_API_CHAIN_TIMEOUT answers 504', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: { EDGE_API_CHAIN_TIMEOUT: '200ms' } })
  sim.hang()
  const answers = await Promise.all(ROUTES.map(([route]) => app.inject(route)))
  for (const res of answers) {
    t.equal(res.statusCode, 504)
    t.same(res.json(), { message: 'chain query timed out' })
  }
})

t.test('a sub-group that times out is left out; the parent answer still counts', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: { EDGE_API_CHAIN_TIMEOUT: '200ms' } })
  sim.hang(SUB_GROUP)
  const res = await app.inject('/v1/models')
  t.equal(res.statusCode, 200)
  t.equal(res.body, '{"object":"list","data":[]}')
})

t.test('the routes appear in the OpenAPI document with 64-bit integer fields', async (t) => {
  const { app } = await buildTestApp(t)
  const doc = (await app.inject('/openapi.json')).json()
  for (const [route] of ROUTES) t.ok(doc.paths[route]?.get, route)
  const pricing = doc.paths['/v1/pricing'].get.responses['200'].content['application/json'].schema
  t.match(pricing.properties.unit_of_compute_price, { type: 'integer', format: 'uint64' })
})
