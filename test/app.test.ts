import t from 'tap'
import { buildTestApp } from './fixtures/app.js'
import type { Metrics } from '../src/metrics/registry.js'
import { sampleValue } from '../harness/prometheus.js'
import { ROUTES } from '../harness/routes.js'

// The Go service's route contract: 17 public Tier A routes, the edge-only /v1/versions and
// the 4 optional CPU-heavy routes (documented always; served when exposed, 403 otherwise),
// from the route catalogue.
const paths = (kind: string): string[] => ROUTES.filter((r) => r.kind === kind).map((r) => r.path)
const PUBLIC_ROUTES = paths('public')
const EDGE_ONLY_ROUTES = paths('edge-only')
const OPTIONAL_ROUTES = paths('optional')

t.test('GET /openapi.json documents exactly the contract routes, each with its schemas', async (t) => {
  const { app } = await buildTestApp(t)
  const res = await app.inject('/openapi.json')
  t.equal(res.statusCode, 200)
  const doc = res.json()
  t.match(doc.openapi, /^3\./)
  const v1 = Object.keys(doc.paths).filter((path) => path.startsWith('/v1/')).sort()
  t.equal(PUBLIC_ROUTES.length, 17)
  t.same(v1, [...PUBLIC_ROUTES, ...EDGE_ONLY_ROUTES, ...OPTIONAL_ROUTES].sort())
  t.ok(doc.paths['/healthz'] !== undefined && doc.paths['/readyz'] !== undefined, 'probes are documented')
  t.notOk(doc.paths['/openapi.json'], 'the document does not list itself')
  for (const path of v1) {
    const operation = doc.paths[path].get ?? doc.paths[path].post
    t.ok(operation?.responses?.['200'], `${path} documents its 200 answer`)
  }
  for (const path of v1.filter((p) => p.includes('{'))) {
    const params = doc.paths[path].get.parameters as Array<{ in: string, schema: { pattern?: string } }>
    t.ok(params.some((p) => p.in === 'path'), `${path} documents its path parameters`)
  }
  for (const path of ['/v1/verify-proof', '/v1/verify-block']) {
    t.ok(doc.paths[path].post.requestBody?.content?.['application/json']?.schema, `${path} documents its body`)
    t.ok(doc.paths[path].post.responses['403'], `${path} documents its 403 (routes not exposed)`)
  }
})

t.test('a well-formed X-Request-Id follows the request into the log beside our own id; anything else is dropped', async (t) => {
  const { app, logs } = await buildTestApp(t)
  const kept = await app.inject({ url: '/v1/status', headers: { 'x-request-id': 'router-7f3a.1' } })
  const dropped = await app.inject({ url: '/v1/status', headers: { 'x-request-id': 'bad id with spaces' } })
  const lines = logs.filter((l) => l.msg === 'request')
  t.match(lines[0], { reqId: 'r1', clientReqId: 'router-7f3a.1' })
  t.equal(kept.headers['x-request-id'], 'router-7f3a.1', 'echoed')
  t.match(lines[1], { reqId: 'r2' })
  t.notOk('clientReqId' in (lines[1] as object))
  t.equal(dropped.headers['x-request-id'], 'r2', 'ours instead')
})

t.test('each app numbers its own requests: two apps in one process do not share a sequence', async (t) => {
  const first = await buildTestApp(t)
  const second = await buildTestApp(t)
  await first.app.inject('/v1/status')
  await first.app.inject('/v1/status')
  await second.app.inject('/v1/status')
  // The access line is written in onResponse, which may run just after inject resolves.
  await new Promise((resolve) => setImmediate(resolve))
  const ids = (logs: Array<Record<string, unknown>>) => logs.filter((l) => l.msg === 'request').map((l) => l.reqId)
  t.same(ids(first.logs), ['r1', 'r2'])
  t.same(ids(second.logs), ['r1'], 'the second app starts at r1 too')
})

t.test('unknown routes answer 404 in the envelope', async (t) => {
  const { app } = await buildTestApp(t)
  for (const url of ['/v2/status', '/v1/nope', '/v1/verify-proofs']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 404, url)
    t.same(res.json(), { message: 'Not Found' })
  }
})

t.test('a known path with a wrong method is 405 with Allow; OPTIONS is 204, as the Go router answered', async (t) => {
  const { app, sim } = await buildTestApp(t)
  const post = await app.inject({ method: 'POST', url: '/v1/status' })
  t.equal(post.statusCode, 405)
  t.equal(post.headers.allow, 'OPTIONS, GET, HEAD')
  t.same(post.json(), { message: 'Method Not Allowed' })
  for (const url of ['/v1/epochs/42/participants', '/v1/bridge/addresses?chain=ethereum', '/healthz', '/openapi.json']) {
    const res = await app.inject({ method: 'DELETE', url })
    t.equal(res.statusCode, 405, url)
    t.equal(res.headers.allow, 'OPTIONS, GET, HEAD')
  }
  const options = await app.inject({ method: 'OPTIONS', url: '/v1/bls/epoch/7' })
  t.equal(options.statusCode, 204)
  t.equal(options.headers.allow, 'OPTIONS, GET, HEAD')
  t.equal(sim.count(), 0, 'no chain request made')
})

t.test('what the router refuses before any route runs is answered in the envelope, without the URL', async (t) => {
  const { app, sim } = await buildTestApp(t)
  const bad = await app.inject('/v1/participants/%ZZ')
  t.equal(bad.statusCode, 400)
  t.same(bad.json(), { message: 'invalid URL: malformed percent-encoding' })
  const long = await app.inject(`/v1/participants/${'a'.repeat(2049)}`)
  t.equal(long.statusCode, 414)
  t.same(long.json(), { message: 'invalid URL: a path value is longer than 2048 characters' })
  const longest = await app.inject(`/v1/participants/${'a'.repeat(2048)}`)
  t.equal(longest.statusCode, 400, 'a value within the limit reaches validation')
  t.equal(sim.count(), 0)
})

t.test('at info, one access line per request and nothing else; a client error adds nothing at info', async (t) => {
  const { app, logs } = await buildTestApp(t, { env: { EDGE_API_LOG_LEVEL: 'info' } })
  await app.inject({ url: '/v1/status', headers: { 'x-request-id': 'req-1' } })
  await app.inject('/v1/bls/epoch/abc')
  await app.inject('/healthz')
  t.same(logs.map((l) => l.msg), ['request', 'request', 'request'], 'no "incoming request" or "request completed"')
  t.match(logs[0], { level: 30, reqId: 'r1', clientReqId: 'req-1', method: 'GET', route: '/v1/status', status: 200, ms: Number })
  t.match(logs[1], { route: '/v1/bls/epoch/:id', status: 400 })
  t.match(logs[2], { route: '/healthz', status: 200 })
})

t.test('a full chain queue is shed like overload: 503 + Retry-After, counted, no warning or access line', async (t) => {
  const { app, sim, logs, metrics } = await buildTestApp(t, { chain: { concurrency: 1, queueLimit: 0 } })
  sim.latency(200)
  const [first, second] = await Promise.all([app.inject('/v1/participants/gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr'), app.inject('/v1/epochs/latest')])
  t.equal(first?.statusCode, 200)
  t.equal(second?.statusCode, 503)
  t.equal(second?.headers['retry-after'], '1')
  t.same(second?.json(), { message: 'too many chain queries in progress; retry shortly' })
  t.same(app.shedding.total, { chainQueue: 1 })
  t.equal(sampleValue(await (metrics as Metrics).scrape(), 'edge_api_shed_total', { reason: 'chainQueue' }), 1, 'and in the metrics')
  t.notOk(logs.some((l) => (l.level as number) >= 40), 'no warning')
  t.same(logs.filter((l) => l.msg === 'request').map((l) => l.status), [200], 'the shed request is in the summary, not the access log')
})

t.test('at debug, each request is also logged as it arrives', async (t) => {
  const { app, logs } = await buildTestApp(t)
  await app.inject({ url: '/v1/status', headers: { 'x-request-id': 'req-2' } })
  t.same(logs.filter((l) => l.clientReqId === 'req-2').map((l) => l.msg), ['incoming request', 'request'])
})
