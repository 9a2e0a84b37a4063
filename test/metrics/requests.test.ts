import Fastify from 'fastify'
import { request as httpGet } from 'node:http'
import t, { type Test } from 'tap'
import { ChainBusyError, ChainTimeoutError } from '../../src/errors.js'
import { Metrics } from '../../src/metrics/registry.js'
import { Pipelining } from '../../src/http/pipelining.js'
import { requestLifecycle } from '../../src/http/request-lifecycle.js'
import { sampleValue } from '../../harness/prometheus.js'
import { until } from '../../harness/wait.js'

async function instrumentedApp (t: Test) {
  const metrics = new Metrics()
  const app = Fastify()
  requestLifecycle(app, { pipelining: new Pipelining(), metrics })
  let release = (): void => {}
  app.get('/v1/epochs/:epoch', async () => ({ ok: true }))
  app.get('/busy', async () => { throw new ChainBusyError() })
  app.get('/timeout', async () => { throw new ChainTimeoutError(1) })
  app.get('/slow', async () => {
    await new Promise<void>((resolve) => { release = resolve })
    return { ok: true }
  })
  t.teardown(() => app.close())
  return { app, metrics, release: () => release() }
}

t.test('duration by method, route pattern and status; unmatched paths share one label', async (t) => {
  const { app, metrics } = await instrumentedApp(t)
  for (const epoch of ['1', '2', '3']) t.equal((await app.inject(`/v1/epochs/${epoch}`)).statusCode, 200)
  t.equal((await app.inject('/no/such/path/1')).statusCode, 404)
  t.equal((await app.inject('/no/such/path/2')).statusCode, 404)
  t.equal((await app.inject({ method: 'HEAD', url: '/v1/epochs/4' })).statusCode, 200)
  const text = await metrics.scrape()
  t.equal(sampleValue(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/v1/epochs/:epoch', status_code: '200' }), 3)
  t.equal(sampleValue(text, 'http_request_duration_seconds_count', { method: 'HEAD', route: '/v1/epochs/:epoch', status_code: '200' }), 1)
  t.equal(sampleValue(text, 'http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status_code: '404' }), 2)
  t.notMatch(text, /\/v1\/epochs\/1|\/no\/such/, 'never a raw URL')
  t.equal(sampleValue(text, 'edge_api_requests_in_flight'), 0)
})

t.test('error answers are timed by route and status; shedding is counted by the app\'s Shedding, not here', async (t) => {
  const { app, metrics } = await instrumentedApp(t)
  t.equal((await app.inject('/busy')).statusCode, 503)
  t.equal((await app.inject('/busy')).statusCode, 503)
  t.equal((await app.inject('/timeout')).statusCode, 504)
  const text = await metrics.scrape()
  t.equal(sampleValue(text, 'edge_api_shed_total', { reason: 'chainQueue' }), 0)
  t.equal(sampleValue(text, 'http_request_duration_seconds_count', { route: '/busy', status_code: '503' }), 2)
  t.equal(sampleValue(text, 'http_request_duration_seconds_count', { route: '/timeout', status_code: '504' }), 1)
})

t.test('in flight while served; a client that hangs up is no longer counted (onResponse never runs for it)', async (t) => {
  const { app, metrics, release } = await instrumentedApp(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const inFlight = async (): Promise<number | undefined> => sampleValue(await metrics.scrape(), 'edge_api_requests_in_flight')
  const client = httpGet({ host: '127.0.0.1', port, path: '/slow' })
  client.on('error', () => {})
  client.end()
  await until(async () => await inFlight() === 1, 'the slow request in flight')
  client.destroy()
  await until(async () => await inFlight() === 0, 'the hung-up request to leave the gauge')
  release()
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(sampleValue(await metrics.scrape(), 'http_request_duration_seconds_count', { route: '/slow' }), undefined,
    'an unanswered request has no status, so no duration')
})
