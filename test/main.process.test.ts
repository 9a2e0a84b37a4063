import { once } from 'node:events'
import { connect, createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { Pool } from 'undici'
import { startChainSimulator } from '../harness/chain-simulator/simulator.js'
import { freePorts } from '../harness/ports.js'
import { startMain } from '../harness/main-process.js'
import { sampleValue } from '../harness/prometheus.js'
import { until } from '../harness/wait.js'

// Each case boots a real child process (dist/main.js) of its own, on its own ports, and
// mostly waits: for the boot, a drain window, an exit. So the cases run side by side, but
// for the one that loads its child with 2000 requests, which runs alone.
t.setTimeout(300_000)
t.jobs = 4
const PARALLEL = { buffered: true }
const ALONE = { buffered: false }

const DRAIN_STEPS = ['starting', 'listening', 'shutdown signal', 'announcing drain', 'listener closed', 'drained', 'exit']

t.test('clean drain: SIGTERM → unready during the 5 s window → exit 0, log lines in order', PARALLEL, async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const main = startMain({ CHAIN_REST_URL: sim.url, EDGE_API_PORT: '0', EDGE_API_HOST: '127.0.0.1', EDGE_API_DRAIN_ANNOUNCE: '5s' })
  t.teardown(() => main.child.kill('SIGKILL'))
  const port = await main.port()
  const origin = `http://127.0.0.1:${port}`
  const ready = await fetch(`${origin}/readyz`)
  t.equal(ready.status, 200)
  t.same(await ready.json(), { status: 'ready' })

  main.child.kill('SIGTERM')
  await main.waitFor('announcing drain')
  const draining = await fetch(`${origin}/readyz`)
  t.equal(draining.status, 503)
  t.same(await draining.json(), { status: 'not ready', reason: 'draining' })
  t.equal((await fetch(`${origin}/healthz`)).status, 200, 'still serving during the window')

  const { code } = await main.exited
  t.equal(code, 0)
  const steps = main.lines.map((l) => l.msg).filter((m) => DRAIN_STEPS.includes(m))
  t.same(steps, DRAIN_STEPS, 'every step, in order')
  const line = (msg: string) => main.lines.find((l) => l.msg === msg) as Record<string, unknown>
  t.match(line('starting'), { drainAnnounce: '5s', shutdownBudget: '2m', chain: sim.url })
  t.match(line('listening'), { port, host: '127.0.0.1', metrics: 'off', bootMs: Number, version: /^\d+\.\d+\.\d+/, commit: '', buildTime: '' }, 'which build: no build-info.json beside src/')
  t.match(line('shutdown signal'), { signal: 'SIGTERM', announce: '5s', budget: '2m' })
  t.match(line('announcing drain'), { announce: '5s', announceMs: 5000 })
  t.match(line('listener closed'), { announcedMs: Number, budget: '2m' })
  t.ok((line('listener closed').announcedMs as number) >= 5000, 'the listener closed after the whole window')
  t.match(line('drained'), { drainMs: Number, shutdownMs: Number })
  t.match(line('exit'), { code: 0, shutdownMs: Number })
  t.equal(main.stderr(), '', 'nothing on stderr')
})

t.test('log writes are asynchronous: a stalled log reader does not stall serving, and at exit every line arrives, in order, `exit` last', ALONE, async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const main = startMain({ CHAIN_REST_URL: sim.url, EDGE_API_PORT: '0', EDGE_API_HOST: '127.0.0.1', EDGE_API_DRAIN_ANNOUNCE: '0' })
  t.teardown(() => main.child.kill('SIGKILL'))
  const port = await main.port()
  main.pauseOutput()
  // Far more log than the pipe and our reader's buffer hold (2 × 64 KB): a synchronous
  // destination would block the process on a write, and these requests with it. /healthz,
  // logged like every route but never shed: on a loaded machine /v1 may answer 503 to a
  // burst, which is load shedding's doing, not the log's.
  const requests = 2000
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 8 })
  const statuses = await Promise.all(Array.from({ length: requests }, async () => {
    const res = await pool.request({ path: '/healthz', method: 'GET' })
    await res.body.dump()
    return res.statusCode
  }))
  await pool.close()
  t.same(new Set(statuses), new Set([200]), 'every request served while nobody read the log')

  main.child.kill('SIGTERM')
  // Announce 0: the listener closes at once, then the drain ends and the process waits for
  // its log writes, which cannot finish while the reader is stalled.
  for (let refused = false; !refused;) {
    refused = await new Promise<boolean>((resolve) => {
      connect(port, '127.0.0.1').once('connect', function (this: { destroy: () => void }) { this.destroy(); resolve(false) }).once('error', () => resolve(true))
    })
    if (!refused) await sleep(20)
  }
  await sleep(300)
  t.equal(main.child.exitCode, null, 'still waiting for its log to be written')
  main.resumeOutput()
  const { code } = await main.exited
  t.equal(code, 0)
  t.equal(main.lines.filter((l) => l.msg === 'request').length, requests, 'one access line per request, none lost')
  const steps = main.lines.map((l) => l.msg).filter((m) => DRAIN_STEPS.includes(m))
  t.same(steps, ['starting', 'listening', 'shutdown signal', 'listener closed', 'drained', 'exit'], 'every step, in order')
  t.equal(main.lines.at(-1)?.msg, 'exit', 'exit is the last line')
})

t.test('a SIGTERM that arrives while booting is held for the drain, not a kill', PARALLEL, async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  // A host name makes listen() resolve it: an event-loop turn during boot, where the pending
  // signal is delivered before the drain exists. (Without one, Node only gets to the signal
  // after the drain is in place; either way the process must not die of it.)
  const main = startMain({ CHAIN_REST_URL: sim.url, EDGE_API_PORT: '0', EDGE_API_HOST: 'localhost', EDGE_API_DRAIN_ANNOUNCE: '0' })
  t.teardown(() => main.child.kill('SIGKILL'))
  await main.waitFor('starting')
  main.child.kill('SIGTERM')
  const sentAt = Date.now()
  const { code, signal } = await main.exited
  // Building the app takes hundreds of milliseconds after "starting": the signal was in first.
  t.ok(sentAt < Date.parse((await main.waitFor('listening')).time as string), 'the signal arrived before the app was listening')
  t.same({ code, signal }, { code: 0, signal: null }, 'a clean exit, not death by signal')
  const steps = main.lines.map((l) => l.msg).filter((m) => DRAIN_STEPS.includes(m))
  t.same(steps, ['starting', 'listening', 'shutdown signal', 'listener closed', 'drained', 'exit'])
})

t.test('config errors: exit 1 with one line naming the variable', PARALLEL, async (t) => {
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [{ EDGE_API_DRAIN_ANNOUNCE: '3s', CHAIN_REST_URL: 'http://127.0.0.1:1' }, 'EDGE_API_DRAIN_ANNOUNCE', /^EDGE_API_DRAIN_ANNOUNCE="3s" is invalid: must be 0 .* or at least 5s/],
    [{}, 'CHAIN_REST_URL', /^CHAIN_REST_URL is required \(example: http:\/\/node:1317\)$/]
  ]
  await Promise.all(cases.map(async ([env, variable, message]) => {
    const main = startMain(env)
    const { code } = await main.exited
    t.equal(code, 1, `${variable}: exit 1`)
    t.equal(main.lines.length, 1, `${variable}: one log line`)
    t.match(main.lines[0], { level: 60, variable, msg: message })
  }))
})

t.test('port in use: exit 1 with a clear line (and config warnings are logged first)', PARALLEL, async (t) => {
  const blocker = createServer()
  blocker.listen(0, '127.0.0.1')
  await once(blocker, 'listening')
  t.teardown(() => blocker.close())
  const { port } = blocker.address() as { port: number }
  // CHAIN_GRPC_URL alone: CHAIN_REST_URL is derived from it, with a warning.
  const main = startMain({ CHAIN_GRPC_URL: '127.0.0.1:9090', EDGE_API_PORT: String(port), EDGE_API_HOST: '127.0.0.1' })
  const { code } = await main.exited
  t.equal(code, 1)
  t.match(main.lines.find((l) => l.msg === 'configuration warning'), { level: 40, warning: /derived http:\/\/127\.0\.0\.1:1317 from CHAIN_GRPC_URL/ })
  const last = main.lines.at(-1)
  t.match(last, { level: 60, code: 'EADDRINUSE', port, msg: `port ${port} on 127.0.0.1 is already in use` })
  t.notOk(main.lines.some((l) => l.msg === 'listening'))
})

t.test('an address it cannot listen on: exit 1 saying why', PARALLEL, async (t) => {
  // 192.0.2.1 (TEST-NET-1) is never a local address.
  const main = startMain({ CHAIN_REST_URL: 'http://127.0.0.1:1', EDGE_API_PORT: '0', EDGE_API_HOST: '192.0.2.1' })
  const { code } = await main.exited
  t.equal(code, 1)
  t.match(main.lines.at(-1), { level: 60, code: 'EADDRNOTAVAIL', msg: /^cannot listen on 192\.0\.2\.1:0: / })
})

t.test('the metrics port answers while the process drains, until it exits', PARALLEL, async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const [metricsPort] = await freePorts(1) as [number]
  const main = startMain({ CHAIN_REST_URL: sim.url, EDGE_API_PORT: '0', EDGE_API_HOST: '127.0.0.1', EDGE_API_DRAIN_ANNOUNCE: '0', EDGE_API_METRICS_PORT: String(metricsPort) })
  t.teardown(() => main.child.kill('SIGKILL'))
  const port = await main.port()
  t.match(await main.waitFor('listening'), { metrics: { port: metricsPort, host: '127.0.0.1' } }, 'the metrics address is logged')
  const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  t.equal(sampleValue(await scrape(), 'edge_api_draining'), 0)

  // A slow request keeps the process draining after its public listener has closed.
  sim.latency(3000, '/productscience/inference/inference/models_all')
  const slow = fetch(`http://127.0.0.1:${port}/v1/governance/models`)
  await until(async () => sampleValue(await scrape(), 'edge_api_requests_in_flight') === 1, 'the slow request in flight')
  main.child.kill('SIGTERM')
  await main.waitFor('listener closed')
  await t.rejects(fetch(`http://127.0.0.1:${port}/healthz`), 'the public port is closed')
  const draining = await scrape()
  t.equal(sampleValue(draining, 'edge_api_draining'), 1, 'the metrics port answers: draining')
  t.equal(sampleValue(draining, 'edge_api_requests_in_flight'), 1, 'with the slow request still in flight')
  t.equal((await slow).status, 200)
  t.equal((await main.exited).code, 0)
})

t.test('a metrics port in use: exit 1 naming EDGE_API_METRICS_PORT', PARALLEL, async (t) => {
  const blocker = createServer()
  blocker.listen(0, '127.0.0.1')
  await once(blocker, 'listening')
  t.teardown(() => blocker.close())
  const { port } = blocker.address() as { port: number }
  const main = startMain({ CHAIN_REST_URL: 'http://127.0.0.1:1', EDGE_API_PORT: '0', EDGE_API_HOST: '127.0.0.1', EDGE_API_METRICS_PORT: String(port) })
  const { code } = await main.exited
  t.equal(code, 1)
  t.match(main.lines.at(-1), { level: 60, code: 'EADDRINUSE', port, msg: `metrics listener (EDGE_API_METRICS_PORT): port ${port} on 127.0.0.1 is already in use` })
})
