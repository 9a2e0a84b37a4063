import { once } from 'node:events'
import { request } from 'node:http'
import t from 'tap'
import { PROBE_PATH } from '../../src/readiness.js'
import { buildTestApp } from '../fixtures/app.js'
import { until } from '../../harness/wait.js'

t.test('GET /healthz is 200 ok (text/plain), draining included, and never touches the chain', async (t) => {
  const { app, sim, readiness } = await buildTestApp(t)
  const res = await app.inject('/healthz')
  t.equal(res.statusCode, 200)
  t.equal(res.body, 'ok')
  t.match(res.headers['content-type'], /^text\/plain/)
  readiness.beginDrain()
  const drained = await app.inject('/healthz')
  t.equal(drained.statusCode, 200)
  t.equal(drained.headers.connection, 'close', 'responses carry Connection: close from the latch on')
  t.equal(sim.count(), 0)
})

t.test('GET /readyz answers ready with Cache-Control: no-store, then from the cache', async (t) => {
  const { app, sim } = await buildTestApp(t)
  const res = await app.inject('/readyz')
  t.equal(res.statusCode, 200)
  t.equal(res.body, '{"status":"ready"}')
  t.equal(res.headers['cache-control'], 'no-store')
  t.not(res.headers.connection, 'close', 'no Connection: close before draining')
  await app.inject('/readyz')
  t.equal(sim.count(PROBE_PATH), 1, 'one chain request for both checks')
})

t.test('GET /readyz while draining: 503 draining, no-store, no chain request', async (t) => {
  const { app, sim, readiness } = await buildTestApp(t)
  readiness.beginDrain()
  const res = await app.inject('/readyz')
  t.equal(res.statusCode, 503)
  t.equal(res.body, '{"status":"not ready","reason":"draining"}')
  t.equal(res.headers['cache-control'], 'no-store')
  t.equal(sim.count(), 0)
})

t.test('chain faults through the simulator', async (t) => {
  t.test('hang: 503 chain unreachable within the 2 s budget (+ scheduling), before the router gives up at 3 s, then cached', async (t) => {
    const { app, sim } = await buildTestApp(t)
    sim.hang(PROBE_PATH)
    let start = performance.now()
    const res = await app.inject('/readyz')
    const took = performance.now() - start
    t.equal(res.statusCode, 503)
    t.equal(res.body, '{"status":"not ready","reason":"chain unreachable","error":"no answer within 2s"}')
    t.equal(res.headers['cache-control'], 'no-store')
    // 2 s is the probe's budget; the margin is for a loaded test machine, and the bound that
    // matters is the router's `timeout check 3s`.
    t.ok(took <= 2800, `answered in ${Math.round(took)} ms`)
    start = performance.now()
    t.equal((await app.inject('/readyz')).body, res.body, 'cached')
    t.ok(performance.now() - start < 100, 'cached answer is immediate')
    t.equal(sim.count(PROBE_PATH), 1)
  })

  t.test('slow 1.5 s: 200 (slow is not down)', async (t) => {
    const { app, sim } = await buildTestApp(t)
    sim.latency(1500, PROBE_PATH)
    const res = await app.inject('/readyz')
    t.equal(res.statusCode, 200)
    t.equal(res.body, '{"status":"ready"}')
  })

  t.test('refused: 503, no address in the answer; recovery: 200 within one cache period', async (t) => {
    const { app, sim } = await buildTestApp(t)
    await sim.refuse()
    const res = await app.inject('/readyz')
    t.equal(res.statusCode, 503)
    t.equal(res.body, '{"status":"not ready","reason":"chain unreachable","error":"chain unavailable"}')
    t.notMatch(res.body, /127\.0\.0\.1|ECONNREFUSED/)
    await sim.restore()
    const start = performance.now()
    await until(async () => (await app.inject('/readyz')).statusCode === 200, 'ready again', { timeoutMs: 4000, intervalMs: 100 })
    const took = performance.now() - start
    t.ok(took <= 3300, `recovered after ${Math.round(took)} ms (cache period 3 s)`)
  })

  t.test('a gateway error is a failure with its code and message', async (t) => {
    const { app, sim } = await buildTestApp(t)
    sim.fail(PROBE_PATH, 14, 'node is syncing')
    const res = await app.inject('/readyz')
    t.equal(res.statusCode, 503)
    t.same(res.json(), { status: 'not ready', reason: 'chain unreachable', error: 'chain answered gRPC code 14: node is syncing' })
  })
})

t.test('a checker that hangs up does not cancel the probe, nor get cached as a failure', async (t) => {
  const { app, sim } = await buildTestApp(t)
  sim.latency(500, PROBE_PATH)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const req = request({ host: '127.0.0.1', port, path: '/readyz' })
  req.on('error', () => {})
  req.end()
  await once(req, 'socket')
  await until(() => sim.count(PROBE_PATH) > 0, 'the probe to reach the chain', { timeoutMs: 2000 })
  t.equal(sim.count(PROBE_PATH), 1, 'the probe is in flight')
  req.destroy() // the checker gives up, as HAProxy does at `timeout check`
  const res = await app.inject('/readyz')
  t.equal(res.statusCode, 200, 'the shared probe finished and succeeded')
  t.equal(sim.count(PROBE_PATH), 1, 'the next check rode on the same probe')
  t.equal((await app.inject('/readyz')).statusCode, 200, 'and success is what got cached')
  t.equal(sim.count(PROBE_PATH), 1)
})
