import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'
import { POC_START } from '../../../harness/chain-simulator/data/epochs.js'

const STAGE = '/productscience/inference/inference/poc_batches_for_stage/'

// One app and simulator for the whole file (building an app compiles every route's schemas,
// slow on a loaded machine); each test starts with no faults, overrides or counts.
const { app, sim, logs } = await buildTestApp(t)
t.beforeEach(async () => {
  sim.clearFaults()
  sim.resetCounts()
})

t.test('GET /v1/poc-batches/:epoch answers the legacy shape: numbers, zero values left out', async (t) => {
  const res = await app.inject(`/v1/poc-batches/${POC_START}`)
  t.equal(res.statusCode, 200)
  t.equal(res.body, JSON.stringify({
    poc_batch: [
      {
        participant: 'gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr',
        pub_key: 'Au5ZQav3E36PZpGta2xUa8r9xEEo9Biph3fG5i3qaeSG',
        hex_pub_key: '02EE5941ABF7137E8F6691AD6B6C546BCAFDC44128F418A98777C6E62DEA69E486',
        poc_batch: [
          {
            participant_address: 'gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr',
            poc_stage_start_block_height: POC_START,
            received_at_block_height: POC_START + 12,
            nonces: [17, 'NONCE_MAX', -3],
            dist: [0.125, 0.5, 0.75],
            batch_id: 'b-1'
          },
          {
            participant_address: 'gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr',
            poc_stage_start_block_height: POC_START,
            received_at_block_height: POC_START + 12,
            batch_id: 'b-2'
          }
        ]
      },
      { participant: 'gonka1g9n2kwfe3mxnyl6j7v0y4l0q8zp5hsyw3dkq7v' }
    ]
  }).replace('"NONCE_MAX"', '9223372036854775807'), 'an int64 nonce of 9223372036854775807 stays exact')
  t.same(sim.requests, [`${STAGE}${POC_START}`])
})

t.test('older chains\' camelCase PoCBatch fields are passed on', async (t) => {
  sim.override(`${STAGE}100`, JSON.stringify({
    poc_batch: [{
      participant: 'gonka1a',
      pub_key: '',
      hex_pub_key: '',
      poc_batch: [{ participantAddress: 'gonka1a', pocStageStartBlockHeight: '9223372036854775807', receivedAtBlockHeight: '101', nonces: ['1'], dist: [1] }]
    }]
  }))
  const res = await app.inject('/v1/poc-batches/100')
  t.equal(res.statusCode, 200)
  t.equal(res.body, '{"poc_batch":[{"participant":"gonka1a","poc_batch":[{"nonces":[1],"dist":[1],"participantAddress":"gonka1a","pocStageStartBlockHeight":9223372036854775807,"receivedAtBlockHeight":101}]}]}')
})

t.test('no batches (empty, missing or null) is 404 with the height', async (t) => {
  let res = await app.inject('/v1/poc-batches/5')
  t.equal(res.statusCode, 404)
  t.same(res.json(), { message: 'PoC batches not found. epoch = 5' })
  for (const body of ['{}', 'null', '{"poc_batch":null}']) {
    sim.override(`${STAGE}6`, body)
    res = await app.inject('/v1/poc-batches/6')
    t.equal(res.statusCode, 404, body)
    t.same(res.json(), { message: 'PoC batches not found. epoch = 6' })
  }
})

t.test('heights are int64: extremes pass exactly, leading zeros are dropped', async (t) => {
  for (const [param, canonical] of [['9223372036854775807', '9223372036854775807'], ['-9223372036854775808', '-9223372036854775808'], ['007', '7'], ['-0', '0']] as const) {
    sim.resetCounts()
    const res = await app.inject(`/v1/poc-batches/${param}`)
    t.equal(res.statusCode, 404, param)
    t.same(res.json(), { message: `PoC batches not found. epoch = ${canonical}` })
    t.same(sim.requests, [`${STAGE}${canonical}`])
  }
})

t.test('bad heights are 400 with the Go binder\'s strconv message, before any chain request', async (t) => {
  const syntax = (value: string): string => `Invalid format for parameter epoch: error binding string parameter: strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`
  const range = (value: string): string => `Invalid format for parameter epoch: error binding string parameter: strconv.ParseInt: parsing "${value}": value out of range`
  const cases: Array<[string, string]> = [
    ['latest', syntax('latest')],
    ['1.5', syntax('1.5')],
    ['0x10', syntax('0x10')],
    ['1e3', syntax('1e3')],
    ['++1', syntax('++1')],
    ['%20', syntax(' ')],
    ['1%2F..%2Fparams', syntax('1/../params')],
    ['9223372036854775808', range('9223372036854775808')],
    ['-9223372036854775809', range('-9223372036854775809')],
    ['99999999999999999999', range('99999999999999999999')],
    // /v1/poc-batches/ : the route with an empty height.
    ['', 'Invalid format for parameter epoch: parameter \'epoch\' is empty, can\'t bind its value']
  ]
  for (const [bad, message] of cases) {
    const res = await app.inject(`/v1/poc-batches/${bad}`)
    t.equal(res.statusCode, 400, bad)
    t.same(res.json(), { message }, bad)
  }
  t.equal(sim.count(), 0)
})

t.test('a signed height is read as strconv.ParseInt reads it', async (t) => {
  sim.resetCounts()
  await app.inject('/v1/poc-batches/+1842000')
  t.same(sim.requests, [`${STAGE}1842000`])
})

t.test('a chain gateway error is a bare 500, as the Go service answered it', async (t) => {
  for (const code of [5, 3, 13, 14]) {
    sim.clearFaults()
    sim.fail(STAGE, code, `stage query said ${code}`)
    const res = await app.inject(`/v1/poc-batches/${POC_START}`)
    t.equal(res.statusCode, 500, `gRPC ${code}`)
    t.same(res.json(), { message: 'Internal Server Error' })
  }
  // A routine chain error: a warning with the chain's message as the cause, not "request failed unexpectedly".
  t.ok(logs.some((l) => l.level === 40 && l.msg === 'request failed' && l.cause === 'ChainStatusError: stage query said 14 (EDGE_ERR_CHAIN_STATUS)'), 'the chain message is in the log')
  t.notOk(logs.some((l) => l.msg === 'request failed unexpectedly'), 'not logged as a bug')
})

t.test('chain transport failures keep 503 and 504', async (t) => {
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CHAIN_TIMEOUT: '50ms' } })
  sim.hang(STAGE)
  let res = await app.inject(`/v1/poc-batches/${POC_START}`)
  t.equal(res.statusCode, 504)
  t.same(res.json(), { message: 'chain query timed out' })
  sim.clearFaults()
  await sim.refuse()
  t.teardown(() => sim.restore())
  res = await app.inject(`/v1/poc-batches/${POC_START}`)
  t.equal(res.statusCode, 503)
  t.same(res.json(), { message: 'chain unavailable' })
})
