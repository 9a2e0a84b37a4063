import Fastify from 'fastify'
import t from 'tap'
import { request } from 'undici'
import { BOOT_GRACE_MS } from '../../src/admission/admission.js'
import { Admission } from '../../src/admission/admit.js'
import { RateLimiter } from '../../src/admission/rate-limit.js'
import { REFUSALS } from '../../src/admission/refusals.js'
import { Shedding } from '../../src/admission/shedding.js'
import { ROUTES } from '../../harness/routes.js'
import { buildTestApp } from '../fixtures/app.js'
import { ScriptedLoop } from '../fixtures/scripted-loop.js'

const quiet = { info: () => {}, warn: () => {} }

t.test('the order: a blocked route is refused before the limit counts it; the limit then refuses the client', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: { EDGE_API_BLOCKED_ROUTES: 'participants', EDGE_API_RATE_LIMIT: '1/1m' } })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const asked = sim.requests.length
  const statuses: number[] = []
  for (const path of ['/v1/participants', '/v1/participants', '/v1/participants', '/v1/status', '/v1/status']) {
    const res = await request(`${base}${path}`)
    await res.body.dump()
    statuses.push(res.statusCode)
  }
  // Were the limit asked first, the second blocked request would be its 429, and /v1/status never served.
  t.same(statuses, [403, 403, 403, 200, 429], 'three 403s that cost the client none of its one request a minute, then its request, then its 429')
  t.equal(sim.requests.length, asked, 'the chain was never asked')
})

t.test('the client is computed once, by the hook, and kept on the request for whoever asks next', async (t) => {
  const app = Fastify()
  Admission.register(app, { shedding: new Shedding(quiet) })
  app.get('/who', async (request) => ({ client: request.client }))
  t.teardown(() => app.close())
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const res = await request(`${base}/who`)
  t.same(await res.body.json(), { client: '127.0.0.1' }, 'request.client set before the handler runs')
})

t.test('a limit whose count fails answers through the error handler: the request never hangs', async (t) => {
  const app = Fastify()
  const pool = { take: async () => { throw new Error('the count failed') } }
  const limiter = new RateLimiter({ limit: { requests: 10, windowMs: 60_000, burst: 10 }, pool, log: quiet })
  Admission.register(app, { shedding: new Shedding(quiet), limiter })
  app.get('/v1/x', async () => 'ok')
  t.teardown(() => app.close())
  const res = await app.inject('/v1/x')
  t.equal(res.statusCode, 500)
  t.not(res.statusCode, REFUSALS.rateLimit.status)
})

t.test('load admits every /v1 route of the catalogue, GET and HEAD, and none of the others', async (t) => {
  // A heap limit of 1 byte trips at every sample past the boot's grace: every request load admits is shed.
  const loop = new ScriptedLoop()
  const { app } = await buildTestApp(t, { loadShedding: { maxHeapUsedBytes: 1, sampler: loop } })
  await app.ready()
  loop.feed({ delayMs: 0, utilization: 0.2 }, BOOT_GRACE_MS / loop.intervalMs + 1)
  const examples = ROUTES.filter((route) => route.method === 'GET' && route.example !== undefined)
  t.ok(examples.length > 10, `${examples.length} routes with an example`)
  for (const route of examples) {
    const byLoad = route.path.startsWith('/v1/') && route.path !== '/v1/events'
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await app.inject({ method, url: route.example as string, headers: { accept: 'application/json' } })
      if (byLoad) t.equal(res.statusCode, 503, `${method} ${route.path}: shed`)
      else t.not(res.statusCode, 503, `${method} ${route.path}: never shed`)
    }
  }
})
