import { readFileSync } from 'node:fs'
import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'
import { NODE_INFO } from '../../../harness/chain-simulator/data/node.js'

const NODE_INFO_PATH = '/cosmos/base/tendermint/v1beta1/node_info'
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version
const FAILED = '{"error":"failed to get node info"}'

t.test('GET /v1/versions answers this edge-api and the chain node versions', async (t) => {
  const { app, sim } = await buildTestApp(t)
  const before = Date.now()
  const res = await app.inject('/v1/versions')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const { timestamp } = res.json()
  t.match(timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'RFC3339 in UTC, whole seconds, as Go wrote it')
  t.ok(Date.parse(timestamp) >= Math.floor(before / 1000) * 1000 && Date.parse(timestamp) <= Date.now(), 'now')
  const node = NODE_INFO.application_version
  t.equal(res.body, `{"timestamp":"${timestamp as string}",` +
    `"api_version":{"application_name":"edge-api","version":"${PACKAGE_VERSION}","commit":"","build_time":""},` +
    `"node_version":{"application_name":"${node.name}","version":"${node.version}","commit":"${node.git_commit}"}}`)
  t.notMatch(res.body, 'mlnodes', 'edge-api has no ML nodes to report')
  t.equal(sim.count(), 1)
})

t.test('GET /v1/versions reports empty node fields when the node leaves them out', async (t) => {
  const { app, sim } = await buildTestApp(t)
  for (const body of ['{}', '{"application_version":null}', 'null']) {
    sim.override(NODE_INFO_PATH, body)
    const res = await app.inject('/v1/versions')
    t.equal(res.statusCode, 200, body)
    t.same(res.json().node_version, { application_name: '', version: '', commit: '' }, body)
  }
})

t.test('GET /v1/versions answers any chain failure with 500 {"error":"failed to get node info"}', async (t) => {
  const { app, sim, logs } = await buildTestApp(t, { env: { EDGE_API_CHAIN_TIMEOUT: '200ms' } })

  await t.test('gateway errors, whatever their code', async (t) => {
    for (const code of [5, 14, 13]) {
      sim.clearFaults()
      sim.fail(NODE_INFO_PATH, code, 'node is catching up')
      const res = await app.inject('/v1/versions')
      t.equal(res.statusCode, 500, `gRPC ${code}`)
      t.equal(res.body, FAILED)
    }
    t.ok(logs.some((l) => l.msg === 'failed to get node info' && l.level === 40), 'logged at warn with the detail')
  })

  await t.test('a 2xx answer that is not JSON', async (t) => {
    sim.clearFaults()
    sim.raw(NODE_INFO_PATH, 200, '<html>')
    const res = await app.inject('/v1/versions')
    t.equal(res.statusCode, 500)
    t.equal(res.body, FAILED)
  })

  await t.test('a chain that does not answer in time', async (t) => {
    sim.clearFaults()
    sim.hang(NODE_INFO_PATH)
    const res = await app.inject('/v1/versions')
    t.equal(res.statusCode, 500)
    t.equal(res.body, FAILED)
  })

  await t.test('a refused chain', async (t) => {
    sim.clearFaults()
    await sim.refuse()
    const res = await app.inject('/v1/versions')
    t.equal(res.statusCode, 500)
    t.equal(res.body, FAILED)
  })
})

t.test('GET /v1/versions is documented with its own error body', async (t) => {
  const { app } = await buildTestApp(t)
  const doc = (await app.inject('/openapi.json')).json()
  const responses = doc.paths['/v1/versions'].get.responses
  t.same(Object.keys(responses['500'].content['application/json'].schema.properties), ['error'])
  t.same(Object.keys(responses['200'].content['application/json'].schema.properties), ['timestamp', 'api_version', 'node_version'])
})

t.test('GET /v1/versions refused by a full read queue answers as every route does (503 + Retry-After), not the node\'s 500', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: { EDGE_API_CHAIN_CONCURRENCY: '1', EDGE_API_CHAIN_TIMEOUT: '1s' } })
  sim.hang()
  // One read in flight and the queue (16 × the concurrency) full behind it, each a read of its
  // own from a client of its own: none is over its share, the next is the replica's own overload.
  const held = Array.from({ length: 17 }, async (_, i) => app.inject({ url: `/v1/participants/gonka1held${i}`, remoteAddress: `10.0.0.${i + 1}` }))
  await new Promise((resolve) => setTimeout(resolve, 200))
  const refused = await app.inject({ url: '/v1/versions', remoteAddress: '10.0.1.1' })
  t.equal(refused.statusCode, 503, refused.body)
  t.equal(refused.headers['retry-after'], '1')
  await Promise.all(held)
})
