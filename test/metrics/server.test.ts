import { once } from 'node:events'
import { createServer } from 'node:net'
import t, { type Test } from 'tap'
import { ListenError } from '../../src/errors.js'
import { Metrics } from '../../src/metrics/registry.js'
import { MetricsListener, type Scrapable } from '../../src/metrics/server.js'

async function listening (t: Test, metrics: Scrapable = new Metrics()) {
  const listener = new MetricsListener(metrics)
  const port = await listener.listen('127.0.0.1', 0)
  t.teardown(() => listener.close())
  return { listener, origin: `http://127.0.0.1:${port}` }
}

t.test('GET /metrics answers the Prometheus text; anything else is 404', async (t) => {
  const metrics = new Metrics()
  metrics.shed('chainQueue')
  const { origin } = await listening(t, metrics)
  const res = await fetch(`${origin}/metrics`)
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), metrics.contentType)
  t.equal(res.headers.get('cache-control'), 'no-store')
  t.match(await res.text(), /^edge_api_shed_total\{reason="chainQueue"\} 1$/m)
  t.equal((await fetch(`${origin}/metrics?name[]=x`)).status, 200, 'a query string is ignored')
  for (const [method, path] of [['GET', '/'], ['GET', '/metrics/'], ['GET', '/v1/status'], ['POST', '/metrics'], ['HEAD', '/other']] as const) {
    const other = await fetch(`${origin}${path}`, { method })
    t.equal(other.status, 404, `${method} ${path}`)
    await other.arrayBuffer()
  }
})

t.test('a scrape that fails is 500 saying so', async (t) => {
  const { origin } = await listening(t, { contentType: 'text/plain', scrape: async () => { throw new Error('collector broke') } })
  const res = await fetch(`${origin}/metrics`)
  t.equal(res.status, 500)
  t.equal(await res.text(), 'metrics could not be collected: collector broke\n')
})

t.test('a port in use is a ListenError naming the metrics listener', async (t) => {
  const blocker = createServer().listen(0, '127.0.0.1')
  await once(blocker, 'listening')
  t.teardown(() => blocker.close())
  const { port } = blocker.address() as { port: number }
  const listener = new MetricsListener(new Metrics())
  const error = await listener.listen('127.0.0.1', port).catch((err: unknown) => err)
  t.ok(error instanceof ListenError)
  t.match(error, { reason: 'EADDRINUSE', port, host: '127.0.0.1', message: `metrics listener (EDGE_API_METRICS_PORT): port ${port} on 127.0.0.1 is already in use` })
  await listener.close()
  t.pass('closing a listener that never listened does nothing')
})

t.test('close() ends kept-alive scrape connections too', async (t) => {
  const { listener, origin } = await listening(t)
  const res = await fetch(`${origin}/metrics`)
  await res.text()
  await listener.close()
  await t.rejects(fetch(`${origin}/metrics`), 'no longer listening')
  await listener.close()
})
