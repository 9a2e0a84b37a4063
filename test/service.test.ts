import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { loadConfig } from '../src/config.js'
import { ListenError } from '../src/errors.js'
import { createLogger } from '../src/logger.js'
import { buildService, LISTEN_BACKLOG, startService } from '../src/service.js'
import { startChainSimulator } from '../harness/chain-simulator/simulator.js'
import { builtMain } from '../harness/dist-main.js'
import { LogLines } from '../harness/log-lines.js'
import { NOT_MEASURED } from '../harness/main-process.js'
import { sampleValue } from '../harness/prometheus.js'

async function simulator (t: Test) {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  return sim
}

t.test('buildService wires one chain client and one readiness into the app, and closes both', async (t) => {
  const sim = await simulator(t)
  const config = loadConfig({ CHAIN_REST_URL: sim.url })
  const log = new LogLines()
  const service = await buildService({ config, logger: createLogger('info', log.stream), chain: { timeoutMs: 1234 } })
  t.equal((await service.app.inject('/readyz')).statusCode, 200)
  t.equal(sim.count('/cosmos/base/tendermint/v1beta1/node_info'), 1, 'readiness probes through the service chain client')
  service.readiness.beginDrain()
  t.same((await service.app.inject('/readyz')).json(), { status: 'not ready', reason: 'draining' }, 'the app answers from the same readiness')
  t.equal((await service.app.inject('/v1/status')).statusCode, 200)
  await new Promise((resolve) => setImmediate(resolve))
  t.ok(log.lines.some((l) => l.msg === 'request'), 'the app logs through the given logger')
  await service.close()
  await t.rejects(service.chain.get('/cosmos/base/tendermint/v1beta1/node_info'), 'the chain client is closed with the app')
})

t.test('startService listens on the config address, reports the bound port and arms the drain with the config windows', async (t) => {
  const sim = await simulator(t)
  const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_DRAIN_ANNOUNCE: '0', EDGE_API_SHUTDOWN_BUDGET: '10s', EDGE_API_METRICS_PORT: 'off' })
  const log = new LogLines()
  const service = await startService({ config, logger: createLogger('info', log.stream) })
  t.teardown(() => service.close())
  t.ok(service.port > 0, `bound port ${service.port}`)
  t.equal((await fetch(`http://127.0.0.1:${service.port}/healthz`)).status, 200)
  service.drain.signal('SIGTERM')
  t.equal((await service.drain.outcome).code, 0)
  t.match(log.lines.find((l) => l.msg === 'shutdown signal'), { announce: '0s', budget: '10s' }, 'the windows come from the config')
  t.ok(log.lines.some((l) => l.msg === 'drained'), 'the drain logs through the given logger')
})

t.test('drainWindows override the config windows (tests need them shorter than the config allows)', async (t) => {
  const sim = await simulator(t)
  const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_METRICS_PORT: 'off' })
  const log = new LogLines()
  const service = await startService({ config, logger: createLogger('info', log.stream), drainWindows: { announceMs: 20, budgetMs: 5000 } })
  t.teardown(() => service.close())
  service.drain.signal('SIGTERM')
  t.equal((await service.drain.outcome).code, 0)
  t.match(log.lines.find((l) => l.msg === 'announcing drain'), { announceMs: 20 })
})

t.test('an address in use is a ListenError that says so', async (t) => {
  const sim = await simulator(t)
  const blocker = createServer()
  blocker.listen(0, '127.0.0.1')
  await once(blocker, 'listening')
  t.teardown(() => blocker.close())
  const { port } = blocker.address() as { port: number }
  const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: String(port), EDGE_API_METRICS_PORT: 'off' })
  const error = await startService({ config, logger: createLogger('silent') }).catch((err: unknown) => err)
  t.ok(error instanceof ListenError)
  t.match(error, { code: 'EDGE_ERR_LISTEN', reason: 'EADDRINUSE', host: '127.0.0.1', port, message: `port ${port} on 127.0.0.1 is already in use` })
})

t.test('any other listen failure names the address and why', async (t) => {
  const sim = await simulator(t)
  // 192.0.2.1 (TEST-NET-1) is never a local address.
  const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '192.0.2.1', EDGE_API_PORT: '0', EDGE_API_METRICS_PORT: 'off' })
  const error = await startService({ config, logger: createLogger('silent') }).catch((err: unknown) => err)
  t.match(error, { reason: 'EADDRNOTAVAIL', message: /^cannot listen on 192\.0\.2\.1:0: / })
})

t.test('metrics: one registry per service, fed by the app, the chain client and readiness; none when off', async (t) => {
  const sim = await simulator(t)
  const on = await buildService({ config: loadConfig({ CHAIN_REST_URL: sim.url }), logger: createLogger('silent') })
  const other = await buildService({ config: loadConfig({ CHAIN_REST_URL: sim.url }), logger: createLogger('silent') })
  const off = await buildService({ config: loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_METRICS_PORT: 'off' }), logger: createLogger('silent') })
  t.teardown(async () => { await on.close(); await other.close(); await off.close() })
  t.equal(off.metrics, undefined, 'off: no metrics at all')
  t.equal((await on.app.inject('/readyz')).statusCode, 200)
  on.readiness.beginDrain()
  const text = await (on.metrics as NonNullable<typeof on.metrics>).scrape()
  t.equal(sampleValue(text, 'http_request_duration_seconds_count', { route: '/readyz', status_code: '200' }), 1, 'the app')
  t.equal(sampleValue(text, 'edge_api_chain_request_duration_seconds_count', { node: '1', outcome: 'ok' }), 1, 'the chain client')
  t.equal(sampleValue(text, 'edge_api_readiness_probe_total', { result: 'ok' }), 1, 'readiness')
  t.equal(sampleValue(text, 'edge_api_chain_node_up', { node: '1' }), 1)
  t.equal(sampleValue(text, 'edge_api_chain_queue_depth'), 0)
  t.equal(sampleValue(text, 'edge_api_draining'), 1, 'the drain latch')
  t.not(other.metrics?.registry, on.metrics?.registry)
  t.equal(sampleValue(await (other.metrics as NonNullable<typeof on.metrics>).scrape(), 'edge_api_readiness_probe_total', { result: 'ok' }), undefined, 'not shared')
})

t.test('startService serves metrics on their own listener, closed with the service; off means no listener', async (t) => {
  const sim = await simulator(t)
  const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_DRAIN_ANNOUNCE: '0', EDGE_API_METRICS_PORT: 'off' })
  const off = await startService({ config, logger: createLogger('silent') })
  t.equal(off.metricsPort, undefined)
  await off.close()
  const service = await startService({ config, logger: createLogger('silent'), metricsPort: 0 })
  t.ok(service.metricsPort !== undefined && service.metricsPort > 0, 'the metricsPort option turns them on, on any free port')
  const url = `http://127.0.0.1:${service.metricsPort}/metrics`
  t.equal((await fetch(url)).status, 200)
  service.drain.signal('SIGTERM')
  await service.drain.outcome
  t.equal((await fetch(url)).status, 200, 'the drain leaves the metrics listener alone')
  await service.close()
  await t.rejects(fetch(url), 'close() closes it')
})

t.test('a metrics port in use is a ListenError naming it, with the public listener closed again', async (t) => {
  const sim = await simulator(t)
  const blocker = createServer()
  blocker.listen(0, '127.0.0.1')
  await once(blocker, 'listening')
  t.teardown(() => blocker.close())
  const { port } = blocker.address() as { port: number }
  const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_METRICS_PORT: String(port) })
  const log = new LogLines()
  const error = await startService({ config, logger: createLogger('info', log.stream) }).catch((err: unknown) => err)
  t.ok(error instanceof ListenError)
  t.match(error, { reason: 'EADDRINUSE', port, message: /^metrics listener \(EDGE_API_METRICS_PORT\): port \d+ on 127\.0\.0\.1 is already in use$/ })
  // Fastify's own line says where the public app listened before the metrics port failed.
  const publicUrl = /^Server listening at (http:\/\/127\.0\.0\.1:\d+)$/.exec(String(log.lines.find((l) => String(l.msg).startsWith('Server listening at'))?.msg))?.[1]
  t.ok(publicUrl, `the public app had listened (${publicUrl})`)
  await t.rejects(fetch(`${publicUrl}/healthz`), 'and is closed again')
})

t.test('with metrics off (EDGE_API_METRICS_PORT=off) prom-client is never loaded; with them on it is', async (t) => {
  // The service as built (dist/, one module a file, prom-client from node_modules) in a child
  // whose every CommonJS file loaded is listed at exit (prom-client is CommonJS).
  builtMain()
  const service = new URL('../dist/service.js', import.meta.url).href
  const config = new URL('../dist/config.js', import.meta.url).href
  const logger = new URL('../dist/logger.js', import.meta.url).href
  const script = [
    `const { buildService } = await import(${JSON.stringify(service)})`,
    `const { loadConfig } = await import(${JSON.stringify(config)})`,
    `const { createLogger } = await import(${JSON.stringify(logger)})`,
    "const built = await buildService({ config: loadConfig({ CHAIN_REST_URL: 'http://127.0.0.1:1', EDGE_API_METRICS_PORT: process.env.METRICS }), logger: createLogger('silent') })",
    'process.stdout.write(String(built.metrics !== undefined))',
    'await built.close()'
  ].join('\n')
  const preload = fileURLToPath(new URL('fixtures/loaded-modules.cjs', import.meta.url))
  const loaded = async (metrics: string): Promise<{ on: string, promClient: boolean }> => {
    const file = `${t.testdir({})}/loaded-${metrics}.txt`
    const { stdout } = await promisify(execFile)(process.execPath, ['--require', preload, '--input-type=module', '-e', script], {
      // NOT_MEASURED: tap would measure the child, and dist/'s functions would count a second time.
      env: { PATH: process.env.PATH, METRICS: metrics, LOADED_MODULES_FILE: file, ...NOT_MEASURED },
      timeout: 60_000
    })
    return { on: stdout, promClient: readFileSync(file, 'utf8').split('\n').some((f) => f.includes('/node_modules/prom-client/')) }
  }
  t.same(await loaded('off'), { on: 'false', promClient: false }, 'metrics off: no prom-client file loaded')
  t.same(await loaded('9464'), { on: 'true', promClient: true }, 'metrics on: loaded (the check sees it)')
})

// The child opens COUNT connections at once, on "go", and prints the slowest's milliseconds from
// its connect() to its connection (a connection past a full queue is made only on TCP's retry, a
// second later).
const CONNECTION_STORM = `
const net = require('node:net')
const [port, count] = process.argv.slice(1).map(Number)
process.stdout.write('ready\\n')
process.stdin.once('data', () => {
  let slowest = 0, done = 0
  const sockets = []
  for (let i = 0; i < count; i++) {
    const asked = performance.now()
    const finish = () => {
      slowest = Math.max(slowest, performance.now() - asked)
      if (++done === count) { process.stdout.write(Math.round(slowest) + '\\n'); for (const s of sockets) s.destroy(); process.exit(0) }
    }
    const socket = net.connect(port, '127.0.0.1', finish)
    socket.on('error', finish)
    sockets.push(socket)
  }
})`

/** The kernel's count of connections dropped for a full listen queue (Linux), all sockets. */
function listenOverflows (): number {
  const [names, values] = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:')).map((l) => l.split(' '))
  return Number(values?.[names?.indexOf('ListenOverflows') ?? -1])
}

t.test(`a storm of new connections while the replica is busy: the kernel holds ${LISTEN_BACKLOG} for it, none waits for TCP's retry`, async (t) => {
  const sim = await simulator(t)
  const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_METRICS_PORT: 'off' })
  const service = await startService({ config, logger: createLogger('warn', new LogLines().stream) })
  t.teardown(() => service.close())
  // More than Node's default backlog (511): those past it would be dropped and asked again.
  const connections = 1000
  const child = spawn(process.execPath, ['-e', CONNECTION_STORM, String(service.port), String(connections)], { stdio: ['pipe', 'pipe', 'inherit'] })
  t.teardown(() => child.kill('SIGKILL'))
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  t.equal((await lines.next()).value, 'ready')
  const overflowsBefore = listenOverflows()
  child.stdin.write('go\n')
  // The replica busy (its event loop held) while they arrive: only the kernel's queue holds them.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500)
  const slowestMs = Number((await lines.next()).value)
  t.equal(listenOverflows() - overflowsBefore, 0, `none dropped for a full queue (the slowest made in ${slowestMs} ms)`)
})
