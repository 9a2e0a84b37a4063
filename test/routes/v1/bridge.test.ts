import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'
import { BRIDGE_ADDRESSES } from '../../../harness/chain-simulator/data/bridge.js'

const BRIDGE = '/productscience/inference/inference/bridge_addresses/'
const INVALID = 'Invalid format for parameter chain: must be a chain name: letters, digits, "_" or "-", at most 64 characters'

t.test('GET /v1/bridge/addresses?chain=ethereum lists the bridge contract addresses', async (t) => {
  const { app, sim } = await buildTestApp(t)
  const res = await app.inject('/v1/bridge/addresses?chain=ethereum')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const addresses = (BRIDGE_ADDRESSES.ethereum ?? []).map((a) => a.address)
  t.equal(addresses.length, 2)
  t.equal(res.body, `{"chain_name":"ethereum","chain_id":"ethereum","addresses":${JSON.stringify(addresses)}}`)
  t.same(sim.requests, [`${BRIDGE}ethereum`])
})

t.test('GET /v1/bridge/addresses answers addresses [] for a chain without contracts (Go: null; docs/clients.md)', async (t) => {
  const { app, sim } = await buildTestApp(t)
  for (const chain of ['polygon', 'constructor', '__proto__']) {
    const res = await app.inject(`/v1/bridge/addresses?chain=${chain}`)
    t.equal(res.statusCode, 200, chain)
    t.equal(res.body, `{"chain_name":"${chain}","chain_id":"${chain}","addresses":[]}`)
  }
  for (const body of ['{}', '{"addresses":null}', 'null']) {
    sim.override(`${BRIDGE}ethereum`, body)
    const res = await app.inject('/v1/bridge/addresses?chain=ethereum')
    t.equal(res.body, '{"chain_name":"ethereum","chain_id":"ethereum","addresses":[]}', body)
  }
})

t.test('GET /v1/bridge/addresses answers "" for an entry without an address', async (t) => {
  const { app, sim } = await buildTestApp(t)
  sim.override(`${BRIDGE}ethereum`, { addresses: [{ id: 'x', chainId: 'ethereum' }, null, { address: '0xabc' }] })
  const res = await app.inject('/v1/bridge/addresses?chain=ethereum')
  t.same(res.json().addresses, ['', '', '0xabc'])
})

t.test('GET /v1/bridge/addresses rejects a missing or malformed chain before any chain request', async (t) => {
  const { app, sim } = await buildTestApp(t)
  for (const query of ['', '?', '?chains=ethereum', '?Chain=ethereum']) {
    const res = await app.inject(`/v1/bridge/addresses${query}`)
    t.equal(res.statusCode, 400, query)
    t.same(res.json(), { message: 'Invalid format for parameter chain: query parameter \'chain\' is required' }, 'the Go binder\'s words')
  }
  for (const bad of ['', 'a'.repeat(65), 'eth%2F..%2F..%2Fnode_info', '..', 'eth.x', 'eth%00', 'eth%20x', 'eth%3Fx%3D1', '%C3%A9th', 'ethereum&chain=polygon']) {
    const res = await app.inject(`/v1/bridge/addresses?chain=${bad}`)
    t.equal(res.statusCode, 400, bad)
    t.same(res.json(), { message: INVALID })
  }
  t.equal(sim.count(), 0, 'no chain request made')
  const longest = await app.inject(`/v1/bridge/addresses?chain=${'a'.repeat(64)}`)
  t.equal(longest.statusCode, 200, '64 characters are allowed')
})

t.test('GET /v1/bridge/addresses answers every chain gateway error with 500 and the chain message', async (t) => {
  const { app, sim } = await buildTestApp(t)
  for (const code of [5, 3, 14, 13]) {
    sim.clearFaults()
    sim.fail(BRIDGE, code, 'chain not found')
    const res = await app.inject('/v1/bridge/addresses?chain=ethereum')
    t.equal(res.statusCode, 500, `gRPC ${code}`)
    t.same(res.json(), { message: "Failed to get addresses for chain 'ethereum': chain not found" })
  }
})

t.test('GET /v1/bridge/addresses keeps transport failures as 502, 503 and 504', async (t) => {
  const { app, sim, logs } = await buildTestApp(t, { env: { EDGE_API_CHAIN_TIMEOUT: '200ms', EDGE_API_CHAIN_MAX_RESPONSE: '64KiB' } })

  await t.test('a 2xx answer that is not JSON → 502, the detail in the log only', async (t) => {
    sim.raw(BRIDGE, 200, '<html>maintenance</html>')
    const res = await app.inject('/v1/bridge/addresses?chain=ethereum')
    t.equal(res.statusCode, 502)
    t.same(res.json(), { message: 'chain answer is not JSON' })
    t.match(logs.findLast((l) => l.msg === 'request failed'), { level: 40, cause: new RegExp(`^chain answered 200 with a body that is not JSON for ${sim.url}${BRIDGE}ethereum: `) })
  })

  await t.test('an answer over EDGE_API_CHAIN_MAX_RESPONSE → 502', async (t) => {
    sim.clearFaults()
    sim.huge(BRIDGE, 1024 * 1024)
    const res = await app.inject('/v1/bridge/addresses?chain=ethereum')
    t.equal(res.statusCode, 502)
    t.same(res.json(), { message: 'chain answer too large' })
    t.match(logs.findLast((l) => l.msg === 'request failed'), { cause: /over the limit of 65536 bytes \(EDGE_API_CHAIN_MAX_RESPONSE\)$/ })
  })

  await t.test('no answer in EDGE_API_CHAIN_TIMEOUT → 504', async (t) => {
    sim.clearFaults()
    sim.hang(BRIDGE)
    const res = await app.inject('/v1/bridge/addresses?chain=ethereum')
    t.equal(res.statusCode, 504)
    t.same(res.json(), { message: 'chain query timed out' })
  })

  await t.test('a non-gateway answer (a proxy error page) → 503', async (t) => {
    sim.clearFaults()
    sim.raw(BRIDGE, 502, '<html>Bad Gateway</html>')
    const res = await app.inject('/v1/bridge/addresses?chain=ethereum')
    t.equal(res.statusCode, 503)
    t.same(res.json(), { message: 'chain unavailable' })
  })

  await t.test('refused → 503', async (t) => {
    sim.clearFaults()
    await sim.refuse()
    const res = await app.inject('/v1/bridge/addresses?chain=ethereum')
    t.equal(res.statusCode, 503)
    t.same(res.json(), { message: 'chain unavailable' })
  })
})

t.test('GET /v1/bridge/addresses documents its required chain parameter', async (t) => {
  const { app } = await buildTestApp(t)
  const doc = (await app.inject('/openapi.json')).json()
  const [param] = doc.paths['/v1/bridge/addresses'].get.parameters
  t.match(param, { name: 'chain', in: 'query', required: true, schema: { pattern: '^[A-Za-z0-9_-]{1,64}$' } })
})
