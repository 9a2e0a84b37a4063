import t from 'tap'
import { EXPOSED_HEADERS, PREFLIGHT_MAX_AGE_S } from '../../src/http/cors.js'
import { buildTestApp } from '../fixtures/app.js'
import { until } from '../../harness/wait.js'

const PAGE = 'https://dashboard.example'

t.test('by default any origin may read /v1 and its height, cache and limit headers; never with credentials', async (t) => {
  const { app } = await buildTestApp(t)
  const res = await app.inject({ url: '/v1/epochs/latest', headers: { origin: PAGE } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['access-control-allow-origin'], '*')
  t.notOk(res.headers['access-control-allow-credentials'])
  t.equal(res.headers['access-control-expose-headers'], EXPOSED_HEADERS.join(', '))
  for (const name of ['X-Block-Height', 'X-Verified-Height', 'X-Verification', 'ETag', 'X-Cache', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'Preference-Applied']) t.ok(EXPOSED_HEADERS.includes(name), name)
  const notFound = await app.inject({ url: '/v1/nope', headers: { origin: PAGE } })
  t.equal(notFound.statusCode, 404)
  t.equal(notFound.headers['access-control-allow-origin'], '*', 'errors too: a page can read why')
})

t.test('a preflight on a known path is 204 with Allow and the methods, headers and max age; an unknown path stays 404', async (t) => {
  const { app } = await buildTestApp(t)
  const preflight = await app.inject({ method: 'OPTIONS', url: '/v1/epochs/latest', headers: { origin: PAGE, 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' } })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers.allow, 'OPTIONS, GET, HEAD')
  t.equal(preflight.headers['access-control-allow-origin'], '*')
  t.equal(preflight.headers['access-control-allow-methods'], 'GET, HEAD')
  t.equal(preflight.headers['access-control-allow-headers'], 'if-none-match')
  t.equal(preflight.headers.vary, 'Access-Control-Request-Headers')
  t.equal(preflight.headers['access-control-max-age'], String(PREFLIGHT_MAX_AGE_S))
  const plain = await app.inject({ method: 'OPTIONS', url: '/v1/epochs/latest' })
  t.equal(plain.statusCode, 204, 'a plain OPTIONS is still Go\'s 204 with Allow')
  t.equal(plain.headers.allow, 'OPTIONS, GET, HEAD')
  t.notOk(plain.headers['access-control-allow-methods'], 'and no preflight headers')
  const unknown = await app.inject({ method: 'OPTIONS', url: '/v1/nope', headers: { origin: PAGE, 'access-control-request-method': 'GET' } })
  t.equal(unknown.statusCode, 404)
})

t.test('a list of origins: only those, with Vary: Origin; off: no CORS header at all', async (t) => {
  const { app } = await buildTestApp(t, { env: { EDGE_API_CORS_ORIGINS: `${PAGE},http://localhost:3000`, EDGE_API_CACHE_SIZE: '1MiB' } })
  const allowed = await app.inject({ url: '/v1/epochs/latest', headers: { origin: PAGE } })
  t.equal(allowed.headers['access-control-allow-origin'], PAGE)
  t.equal(allowed.headers.vary, 'Origin, x-min-block-height', 'an HTTP cache keeps one answer per origin')
  const other = await app.inject({ url: '/v1/epochs/latest', headers: { origin: 'https://evil.example' } })
  t.notOk(other.headers['access-control-allow-origin'])
  t.equal(other.headers['x-cache'], 'hit', 'from the answer cache')
  t.equal(other.headers.vary, 'Origin, x-min-block-height', 'its Vary as well')
  const preflight = await app.inject({ method: 'OPTIONS', url: '/v1/epochs/latest', headers: { origin: PAGE, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-request-id' } })
  t.equal(preflight.headers.vary, 'Origin, Access-Control-Request-Headers')
  const refused = await app.inject({ method: 'OPTIONS', url: '/v1/epochs/latest', headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' } })
  t.equal(refused.statusCode, 204)
  t.notOk(refused.headers['access-control-allow-methods'], 'an origin not listed gets no preflight')
  const { app: off } = await buildTestApp(t, { env: { EDGE_API_CORS_ORIGINS: 'off' } })
  const res = await off.inject({ url: '/v1/epochs/latest', headers: { origin: PAGE } })
  t.notOk(res.headers['access-control-allow-origin'])
  t.notOk(res.headers['access-control-expose-headers'])
})

t.test('Preference-Applied: readable by a page on the answer of a long-poll asked with Prefer: wait, never on its refusal', async (t) => {
  const { app, sim, metrics } = await buildTestApp(t, { env: { EDGE_API_WAITING_PER_CLIENT: '1' } })
  const ask = { url: `/v1/epochs/latest?afterHeight=${sim.clock.height}`, headers: { origin: PAGE, prefer: 'wait=20' }, remoteAddress: '198.51.100.9' }
  const held = app.inject(ask)
  await until(async () => /edge_api_held_requests 1\n/.test(await metrics?.registry.metrics() ?? ''), 'the first held: the client\'s one place')
  const refused = await app.inject(ask)
  t.equal(refused.statusCode, 429, 'the second over the client\'s cap')
  t.notOk(refused.headers['preference-applied'], 'a refusal applied no preference')
  t.equal(refused.headers['access-control-allow-origin'], '*', 'and a page reads it')
  sim.clock.advance()
  const answered = await held
  t.equal(answered.statusCode, 200)
  t.equal(answered.headers['preference-applied'], 'wait=20')
  t.match(answered.headers['access-control-expose-headers'], /(^|, )Preference-Applied(,|$)/, 'which a page may read')
})

t.test('fair admission\'s stop writes the last period\'s top clients line once', async (t) => {
  const { app, logs } = await buildTestApp(t, { env: { EDGE_API_LOG_LEVEL: 'info' } })
  await app.inject({ url: '/v1/status', remoteAddress: '198.51.100.10' })
  app.fairAdmission.stop()
  t.match(logs.filter((line) => line.msg === 'top clients'), [{ requests: 1, topByRequests: [{ client: '198.51.100.10', count: 1 }] }])
  t.equal(logs.filter((line) => line.msg === 'top clients').length, 1)
})
