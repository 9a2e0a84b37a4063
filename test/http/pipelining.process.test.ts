import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { MAX_REQUESTS_IN_PROGRESS_PER_CONNECTION, MAX_UNANSWERED_PER_CONNECTION } from '../../src/http/pipelining.js'
import type { Metrics } from '../../src/metrics/registry.js'
import { buildTestApp, type TestApp } from '../fixtures/app.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { startMain } from '../../harness/main-process.js'
import { sampleValue } from '../../harness/prometheus.js'
import { until } from '../../harness/wait.js'

t.setTimeout(180_000)

const EPOCH_DATA = '/productscience/inference/bls/epoch_data'
const pipelined = (paths: string[]): string => paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: edge\r\n\r\n`).join('')
const epochs = (n: number): string[] => Array.from({ length: n }, (_, i) => `/v1/bls/epoch/${i + 1}`)

/** A client that writes everything at once and reads nothing until asked. */
async function pipeliner (port: number, requests: string): Promise<{ socket: Socket, closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.on('error', () => {})
  socket.pause()
  socket.write(requests)
  return { socket, closed: once(socket, 'close').then(() => undefined) }
}

async function listeningApp (t: Test) {
  const test = await buildTestApp(t)
  await test.app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => test.app.server.closeAllConnections())
  return { ...test, port: (test.app.server.address() as { port: number }).port }
}

async function inFlight (test: TestApp): Promise<number | undefined> {
  return sampleValue(await (test.metrics as Metrics).scrape(), 'edge_api_requests_in_flight')
}

t.test(`a connection's pipelined requests are handled ${MAX_REQUESTS_IN_PROGRESS_PER_CONNECTION} at a time; the rest wait, then run in order`, async (t) => {
  const test = await listeningApp(t)
  const { port, sim, logs } = test
  sim.hang(EPOCH_DATA)
  const { socket } = await pipeliner(port, pipelined(epochs(12)))
  await until(() => sim.count(EPOCH_DATA) >= MAX_REQUESTS_IN_PROGRESS_PER_CONNECTION, 'the first chain reads')
  // Time for the other eight to reach the chain, were they handled.
  await sleep(500)
  t.equal(sim.count(EPOCH_DATA), MAX_REQUESTS_IN_PROGRESS_PER_CONNECTION, 'only the first four reach the chain')
  t.equal(await inFlight(test), 12, 'all twelve are in flight')
  socket.destroy()
  // Node closes only the answer it was writing; the eleven queued behind it are closed too.
  await until(async () => await inFlight(test) === 0, 'no request left in flight')

  // With answers, every request runs, and the answers come back in order.
  sim.clearFaults()
  sim.resetCounts()
  sim.latency(50, EPOCH_DATA)
  const from = logs.length
  const reader = await pipeliner(port, pipelined(epochs(12)))
  let raw = ''
  reader.socket.setEncoding('utf8').on('data', (chunk: string) => { raw += chunk })
  reader.socket.resume()
  await until(() => (raw.match(/HTTP\/1\.1 /g) ?? []).length === 12, 'twelve answers', { timeoutMs: 20_000 })
  reader.socket.destroy()
  t.equal(sim.count(EPOCH_DATA), 12, 'all twelve were handled')
  const ids = [...raw.matchAll(/x-request-id: (r[0-9a-z]+)/g)].map((m) => parseInt((m[1] as string).slice(1), 36))
  t.same(ids, [...ids].sort((a, b) => a - b), 'in the order they were sent')
  const lines = logs.slice(from).filter((l) => l.msg === 'request' && l.route === '/v1/bls/epoch/:id')
  t.equal(lines.length, 12, 'each with its access line')
})

t.test(`a client with more than ${MAX_UNANSWERED_PER_CONNECTION} requests unanswered is disconnected; the rest are never run`, async (t) => {
  const test = await listeningApp(t)
  const { port, sim, logs } = test
  sim.hang(EPOCH_DATA)
  const { socket, closed } = await pipeliner(port, pipelined(epochs(MAX_UNANSWERED_PER_CONNECTION + 30)))
  t.ok(await Promise.race([closed.then(() => true), sleep(10_000).then(() => false)]), 'the server closed the connection')
  socket.destroy()
  t.match(logs.find((l) => l.msg === 'connection closed: too many pipelined requests unanswered'), { level: 30, unanswered: MAX_UNANSWERED_PER_CONNECTION })
  await sleep(200)
  t.equal(sim.count(EPOCH_DATA), MAX_REQUESTS_IN_PROGRESS_PER_CONNECTION, 'nothing beyond the first four was handled')
  await until(async () => await inFlight(test) === 0, 'no request left in flight')
  t.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200, 'other connections are served')
  // The four hung chain reads would otherwise hold the app's close until the chain timeout.
  sim.clearFaults()
})

/** The child's resident memory in MB (Linux). */
function rssMB (pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024
}

// Issue 16, item 5: one socket pipelining 400 × GET /openapi.json (15.6 KB sent, 77 KB per
// answer) and never reading pushed RSS up 77–98 MB; 40 such sockets 216–270 MB and /healthz
// to 0.8–1.8 s. Measured on node dist/main.js as deployed (the test loader alone holds
// hundreds of MB). Bounds with room for a loaded machine; the measured values are in the comments.
t.test('clients that pipeline 400 × GET /openapi.json and never read cost a bounded amount of memory', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const main = startMain({ CHAIN_REST_URL: sim.url, EDGE_API_PORT: '0', EDGE_API_HOST: '127.0.0.1', EDGE_API_DRAIN_ANNOUNCE: '0' })
  t.teardown(() => main.child.kill('SIGKILL'))
  const port = await main.port()
  const pid = main.child.pid as number
  const healthz = async (): Promise<number> => {
    const started = performance.now()
    await (await fetch(`http://127.0.0.1:${port}/healthz`)).text()
    return performance.now() - started
  }
  for (let i = 0; i < 5; i++) await healthz()
  for (const [sockets, boundMB] of [[1, 40], [40, 150]] as const) {
    await sleep(500)
    const before = rssMB(pid)
    const clients = await Promise.all(Array.from({ length: sockets }, async () => pipeliner(port, pipelined(Array(400).fill('/openapi.json')))))
    let peak = before
    const latencies: number[] = []
    const started = performance.now()
    while (performance.now() - started < 3000) {
      latencies.push(await healthz())
      peak = Math.max(peak, rssMB(pid))
      await sleep(100)
    }
    for (const { socket } of clients) socket.destroy()
    latencies.sort((a, b) => a - b)
    t.comment(`${sockets} socket(s): RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} MB (+${(peak - before).toFixed(0)}); ` +
      `/healthz meanwhile median ${latencies[latencies.length >> 1]?.toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms over ${latencies.length}`)
    t.ok(peak - before < boundMB, `${sockets} socket(s): RSS grew ${(peak - before).toFixed(0)} MB, under ${boundMB} MB`)
  }
  main.child.kill('SIGTERM')
  t.equal((await main.exited).code, 0)
})
