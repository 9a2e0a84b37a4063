// Fair share on real sockets, clients from distinct loopback addresses: while the replica is
// behind (scripted event-loop readings, so the outcome is the policy's whatever the machine),
// the heavy client is refused with a held 429 and the polite one is served; a full chain
// queue refuses the heavy client's excess, never the polite client's read, which goes next.
import type { FastifyReply } from 'fastify'
import t, { type Test } from 'tap'
import { Agent, request } from 'undici'
import { loadConfig } from '../../src/config.js'
import { MIN_PER_S, STEP_PER_S } from '../../src/admission/excess-pace.js'
import { BUSY_UTILIZATION, FairAdmission, loopLoad } from '../../src/admission/fair-admission.js'
import { HOLD_LIMIT } from '../../src/admission/refusal-hold.js'
import { Shedding } from '../../src/admission/shedding.js'
import { createLogger } from '../../src/logger.js'
import { startService } from '../../src/service.js'
import { CACHE_OFF } from '../../harness/cache-off.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { LogLines } from '../../harness/log-lines.js'
import { ManualClock } from '../fixtures/manual-clock.js'
import { ScriptedLoop } from '../fixtures/scripted-loop.js'
import { until } from '../../harness/wait.js'
import { openSse } from '../fixtures/sse-client.js'

const TARGET_MS = 20
const BEHIND = { delayMs: 4 * TARGET_MS, utilization: 1 }
const KEEPING_UP = { delayMs: 2, utilization: 0.5 }
// Under the target delay, but the loop nearly always running.
const BUSY = { delayMs: 2, utilization: 0.95 }

t.setTimeout(60_000)

async function replica (t: Test, env: Record<string, string> = {}, targetMs = TARGET_MS) {
  const sim = await startChainSimulator()
  const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_LOG_LEVEL: 'info', EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', ...CACHE_OFF, ...env })
  const log = new LogLines()
  const loop = new ScriptedLoop()
  const service = await startService({ config, logger: createLogger(config.logLevel, log.stream), drainWindows: { announceMs: 0, budgetMs: 2000 }, metricsPort: 0, loadShedding: { maxEventLoopDelay: targetMs, sampler: loop } })
  t.teardown(async () => {
    service.chain.abortAll()
    service.app.server.closeAllConnections()
    await service.close()
    await sim.close()
  })
  // Past the boot's grace, keeping up.
  loop.feed(KEEPING_UP, 11)
  return { ...service, sim, loop, log, origin: `http://127.0.0.1:${service.port}` }
}

/** A browser's preflight of a GET with If-None-Match, from a page on another origin. */
const PREFLIGHT = { method: 'OPTIONS', headers: { origin: 'https://page.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' } } as const

/** A client of its own address (127.0.0.x), each request timed. */
function client (t: Test, origin: string, localAddress: string, connections: number) {
  const agent = new Agent({ localAddress, connections })
  t.teardown(() => agent.destroy())
  return async (path: string, options: { method?: 'GET' | 'OPTIONS', headers?: Record<string, string> } = {}) => {
    const started = performance.now()
    const res = await request(`${origin}${path}`, { dispatcher: agent, ...options })
    const body = await res.body.text()
    return { status: res.statusCode, headers: res.headers, body, ms: performance.now() - started }
  }
}

t.test('behind: the client over its share gets 429 + Retry-After, held that long; the polite one is served', async (t) => {
  const { origin, sim, loop, app, metricsPort } = await replica(t)
  // The heavy client's reads stay in flight while the polite one reads (held refusal included):
  // it holds 40 of the replica's requests. 10 s: with 3 s, a loaded machine (load average 20,
  // under coverage) ended them before the polite reads had, and the replica was even again.
  sim.latency(10_000, '/productscience/inference/inference/inference_participant/heavy')
  const heavy = client(t, origin, '127.0.0.2', 64)
  const polite = client(t, origin, '127.0.0.3', 1)
  const inFlight = Array.from({ length: 40 }, async (_, i) => heavy(`/v1/participants/heavy${i}`))
  await until(() => app.fairAdmission.share.inFlight === 40, 'the heavy client\'s 40 reads in flight', { timeoutMs: 10_000 })
  // The polite client has just been served: it is one of the active clients, and the next
  // sample sees the heavy one over its share.
  t.equal((await polite('/v1/status')).status, 200)
  await until(() => app.fairAdmission.share.uneven, 'the heavy client seen over its share')
  loop.feed(BEHIND, 10)

  const refused = await heavy('/v1/status')
  t.equal(refused.status, 429, 'the heavy client\'s excess')
  t.equal(refused.headers['retry-after'], '1')
  t.match(JSON.parse(refused.body), { message: /too many requests from this client/ })
  t.ok(refused.ms >= 950, `held for its Retry-After before it was answered (${Math.round(refused.ms)} ms)`)
  for (let i = 0; i < 20; i++) {
    const served = await polite(`/v1/participants/${PARTICIPANTS[i % PARTICIPANTS.length]?.address ?? ''}`)
    t.equal(served.status, 200, 'the polite client is served while the heavy one is refused')
  }
  await Promise.all(inFlight)
  const metrics = await (await request(`http://127.0.0.1:${metricsPort as number}/metrics`)).body.text()
  t.match(metrics, /edge_api_refusals_total\{reason="fair_share"\} 1\n/)
  t.equal(app.shedding.total.eventLoopDelay ?? 0, 0, 'nothing shed as the replica\'s own overload: a client was over its share')
})

t.test('busy, not yet behind: the client far over its share is paced, most of its excess gets the held 429, the others are served', async (t) => {
  const { origin, sim, loop, app } = await replica(t)
  sim.latency(3000, '/productscience/inference/inference/inference_participant/heavy')
  const heavy = client(t, origin, '127.0.0.7', 128)
  const polite = client(t, origin, '127.0.0.8', 1)
  const lively = client(t, origin, '127.0.0.9', 4)
  t.equal((await polite('/v1/status')).status, 200)
  const inFlight = Array.from({ length: 40 }, async (_, i) => heavy(`/v1/participants/heavy${i}`))
  await until(() => app.fairAdmission.share.inFlight === 40, 'the heavy client\'s 40 reads in flight', { timeoutMs: 10_000 })
  loop.feed(BUSY, 10)
  t.equal(app.fairAdmission.excessPerSecond, MIN_PER_S, 'busy for ten samples: the far-over client\'s pace at its floor')
  // Fifty requests over a second: paced at 10 a second, a few go in, the rest are its excess.
  const started = performance.now()
  const asked: Array<Promise<{ status: number }>> = []
  for (let i = 0; i < 50; i++) {
    asked.push(heavy('/v1/status'))
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const seconds = (performance.now() - started) / 1000
  const page = await Promise.all(Array.from({ length: 4 }, async () => lively('/v1/status')))
  t.same(page.map((r) => r.status), [200, 200, 200, 200], 'a client with a few requests at once is served')
  t.equal((await polite('/v1/status')).status, 200)
  const statuses = (await Promise.all(asked)).map((r) => r.status)
  const served = statuses.filter((s) => s === 200).length
  t.equal(statuses.filter((s) => s === 429).length, 50 - served, 'the rest refused as its excess')
  t.ok(served >= 2 && served <= 2 + MIN_PER_S * seconds, `${served} of 50 let in over ${seconds.toFixed(2)} s: paced, neither starved nor let through`)
  loop.feed(KEEPING_UP, 10)
  t.equal((await heavy('/v1/status')).status, 200, 'keeping up again: the heavy client is served, work-conserving')
  await Promise.all(inFlight)
})

t.test('waiting is not work in flight: a client holding 8 long-polls and 4 event streams is not heavy, its 5 reads at once are served', async (t) => {
  const { origin, sim, app, metricsPort } = await replica(t)
  const waiter = client(t, origin, '127.0.0.10', 16)
  const other = client(t, origin, '127.0.0.11', 1)
  const head = sim.clock.height
  const held = Array.from({ length: 8 }, async () => await waiter(`/v1/epochs/latest?afterHeight=${head}&wait=25`))
  const streams = await Promise.all(Array.from({ length: 4 }, async () => await openSse(`${origin}/v1/events`, {}, '127.0.0.10')))
  t.teardown(() => { for (const stream of streams) stream.close() })
  t.same(streams.map((stream) => stream.status), [200, 200, 200, 200])
  const metrics = async (): Promise<string> => await (await request(`http://127.0.0.1:${metricsPort as number}/metrics`)).body.text()
  let text = ''
  await until(async () => /edge_api_held_requests 8\n/.test(text = await metrics()), 'the 8 long-polls held', { timeoutMs: 10_000 })
  t.match(text, /edge_api_event_streams_open 4\n/, 'and the 4 streams open')
  t.equal(app.fairAdmission.share.inFlight, 0, 'none of them counted as work in flight: the waiting quota counts them')
  t.equal((await other('/v1/status')).status, 200, 'another client, active once')
  const reads = await Promise.all(Array.from({ length: 5 }, async () => await waiter('/v1/status')))
  // Counted in flight, the 8 held long-polls made the 5 reads "far over" the other client's one: 200,429,429,429,429.
  t.same(reads.map((read) => read.status), [200, 200, 200, 200, 200], 'five reads at once on an idle replica, all served')
  sim.clock.advance()
  t.same((await Promise.all(held)).map((answer) => answer.status), Array(8).fill(200), 'the long-polls answered at the next block')
  t.equal(app.fairAdmission.share.inFlight, 0, 'and counted out once, not twice')
})

/** Whether a refusal carries what a page needs to read it: the origin allowed, Retry-After and the limit fields exposed. */
function readableByPage (t: Test, headers: Record<string, unknown>, what: string): void {
  t.equal(headers['access-control-allow-origin'], '*', `${what}: a page may read it`)
  const exposed = String(headers['access-control-expose-headers']).split(/,\s*/)
  for (const name of ['Retry-After', 'RateLimit', 'RateLimit-Policy']) t.ok(exposed.includes(name), `${what}: ${name} exposed`)
}

t.test('a preflight is answered 204 while its client\'s reads are refused as its excess, and the 429 is readable by the page', async (t) => {
  const { origin, sim, loop, app } = await replica(t)
  sim.latency(3000, '/productscience/inference/inference/inference_participant/heavy')
  const heavy = client(t, origin, '127.0.0.12', 64)
  const polite = client(t, origin, '127.0.0.13', 1)
  const inFlight = Array.from({ length: 40 }, async (_, i) => heavy(`/v1/participants/heavy${i}`))
  await until(() => app.fairAdmission.share.inFlight === 40, 'the heavy client\'s 40 reads in flight', { timeoutMs: 10_000 })
  t.equal((await polite('/v1/status')).status, 200)
  await until(() => app.fairAdmission.share.uneven, 'the heavy client seen over its share')
  loop.feed(BEHIND, 10)
  const [preflight, refused] = await Promise.all([heavy('/v1/epochs/latest', PREFLIGHT), heavy('/v1/epochs/latest')])
  t.equal(preflight.status, 204, 'the preflight')
  t.equal(preflight.headers['access-control-allow-methods'], 'GET, HEAD')
  t.equal(refused.status, 429, 'the read it precedes, refused as the client\'s excess')
  readableByPage(t, refused.headers, 'the 429')
  await Promise.all(inFlight)
})

t.test('a preflight is answered 204 while the replica sheds, and the 503 is readable by the page', async (t) => {
  const { origin, loop, app } = await replica(t)
  const lone = client(t, origin, '127.0.0.14', 1)
  loop.feed(BEHIND, 30)
  const shed: Array<Record<string, unknown>> = []
  for (let i = 0; i < 40; i++) {
    t.equal((await lone('/v1/epochs/latest', PREFLIGHT)).status, 204, 'every preflight')
    const read = await lone('/v1/epochs/latest')
    if (read.status === 503) shed.push(read.headers)
  }
  t.ok(shed.length > 0 && (app.shedding.total.eventLoopDelay ?? 0) === shed.length, `the policy shed ${shed.length} of the reads, and no preflight`)
  readableByPage(t, shed[0] ?? {}, 'the 503')
})

t.test('EDGE_API_SHED_DELAY=0: the far-over client\'s pace still follows the load, growing while the loop keeps up, back at its floor while it is busy', async (t) => {
  const { origin, sim, loop, app } = await replica(t, {}, 0)
  sim.latency(5000, '/productscience/inference/inference/inference_participant/heavy')
  const heavy = client(t, origin, '127.0.0.15', 256)
  const polite = client(t, origin, '127.0.0.16', 1)
  t.equal((await polite('/v1/status')).status, 200)
  const inFlight = Array.from({ length: 40 }, async (_, i) => heavy(`/v1/participants/heavy${i}`))
  await until(() => app.fairAdmission.share.inFlight === 40, 'the heavy client\'s 40 reads in flight', { timeoutMs: 10_000 })
  // Two seconds of 30 reads per 100 ms from the far-over client, each 100 ms a sample keeping up.
  const asked: Array<Promise<{ status: number }>> = []
  const started = performance.now()
  let fastest = 0
  for (let round = 0; round < 20; round++) {
    for (let i = 0; i < 30; i++) asked.push(heavy('/v1/status'))
    await new Promise((resolve) => setTimeout(resolve, 100))
    loop.feed(KEEPING_UP)
    fastest = Math.max(fastest, app.fairAdmission.excessPerSecond)
  }
  const seconds = (performance.now() - started) / 1000
  const served = (await Promise.all(asked)).filter((r) => r.status === 200).length
  // Frozen at its start (20/s; what a sample never reached it left it at), it let in 54 in 5 s;
  // grown while the loop keeps up it follows what this process can send and serve: 522/s alone,
  // 135/s under coverage at load 20, 59/s at load 17 (where 3x the frozen pace failed: issue 54).
  t.ok(served > 1.5 * STEP_PER_S * seconds, `${served} of 600 served in ${seconds.toFixed(1)} s (frozen: at most ~${Math.round(STEP_PER_S * seconds)})`)
  // Frozen, it stays at exactly STEP_PER_S; grown, any sample that saw it used raised it (the
  // last one alone may have seen none served on a starved machine, and set it back to STEP_PER_S).
  t.ok(fastest > STEP_PER_S, `the pace grew to ${Math.round(fastest)}/s`)
  // The busy tier with no delay target: busy by utilisation alone (the delay far under any
  // quarter), each sample halves the pace, to its floor in ten (issue 54: the tier rested on
  // one test; this one fails too when busy samples no longer slow the far-over client).
  loop.feed(BUSY, 10)
  t.equal(app.fairAdmission.excessPerSecond, MIN_PER_S, 'ten busy samples (the loop nearly always running): the pace back at its floor')
  await Promise.all(inFlight)
})

t.test('the load of a sample: behind at the target, busy at a quarter of it or nearly always running', async (t) => {
  t.equal(loopLoad({ delayMs: 20, utilization: 0.1 }, 20), 'behind')
  t.equal(loopLoad({ delayMs: 5, utilization: 0.1 }, 20), 'busy')
  t.equal(loopLoad({ delayMs: 4.9, utilization: BUSY_UTILIZATION }, 20), 'busy')
  t.equal(loopLoad({ delayMs: 4.9, utilization: BUSY_UTILIZATION - 0.01 }, 20), 'keepingUp')
  t.equal(loopLoad({ delayMs: 500, utilization: 1 }, 0), 'busy', 'no delay-based shedding: never behind, busy by utilisation alone')
  t.equal(loopLoad({ delayMs: 500, utilization: BUSY_UTILIZATION - 0.01 }, 0), 'keepingUp')
})

t.test('behind with no client over its share: the replica\'s own overload, 503, never 429', async (t) => {
  const { origin, loop, app } = await replica(t)
  const lone = client(t, origin, '127.0.0.4', 1)
  loop.feed(BEHIND, 30)
  const statuses = new Set<number>()
  for (let i = 0; i < 40; i++) statuses.add((await lone('/v1/status')).status)
  t.ok(statuses.has(503), 'the policy sheds a share')
  t.notOk(statuses.has(429), 'a lone client is never over its share')
  t.ok((app.shedding.total.eventLoopDelay ?? 0) > 0)
})

t.test('a full chain queue refuses the heavy client\'s excess (429), and the polite client\'s read goes next', async (t) => {
  const { origin, sim, app, chain } = await replica(t, { EDGE_API_CHAIN_CONCURRENCY: '2' })
  sim.latency(200, '/productscience/inference/inference/inference_participant/')
  const heavy = client(t, origin, '127.0.0.5', 128)
  const polite = client(t, origin, '127.0.0.6', 1)
  // Alone, the heavy client is never over its share: 2 in flight, 32 waiting (16× the concurrency).
  const first = Array.from({ length: 34 }, async (_, i) => heavy(`/v1/participants/heavy${i}`))
  await until(() => chain.queued === 32, 'the chain queue full of the heavy client\'s reads', { timeoutMs: 10_000 })
  // The polite client asks 5 times a second from now on: one of the active clients.
  const polling = { on: true }
  const pollingDone = (async () => {
    while (polling.on) {
      await polite('/v1/status')
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  })()
  await until(() => app.fairAdmission.share.activeClients === 2, 'the polite client active')
  const more = Array.from({ length: 66 }, async (_, i) => heavy(`/v1/participants/heavy${34 + i}`))
  const served = await polite(`/v1/participants/${PARTICIPANTS[0].address}`)
  t.equal(served.status, 200)
  t.ok(served.ms < 1000, `the polite read waited one turn, not behind 32 heavy reads (${Math.round(served.ms)} ms; 3 400 in arrival order)`)
  const statuses = (await Promise.all([...first, ...more])).map((r) => r.status)
  polling.on = false
  await pollingDone
  const refused = statuses.filter((s) => s === 429).length
  t.ok(refused >= 60, `${refused} of the heavy client's reads refused as its excess`)
  t.equal(statuses.filter((s) => s === 503).length, 0, 'none as the replica\'s overload: another client was there')
  t.ok(app.fairAdmission.held <= HOLD_LIMIT)
})

t.test('a line a period names the top clients by requests and refusals; the share takes stock every sample', async (t) => {
  const clock = new ManualClock()
  const lines: Array<Record<string, unknown>> = []
  const log = { info: (fields: object, msg: string) => { lines.push({ ...fields, msg }) } }
  const fair = new FairAdmission({ log, shedding: new Shedding(log), clock, topClientsIntervalMs: 300 })
  fair.start()
  const reply = { raw: { once: () => {} }, request: {} } as unknown as FastifyReply
  const served = fair.admit(reply, '10.0.0.1', () => {}, 'keepingUp', { admit: () => true })
  t.ok(served)
  await clock.advance(300)
  t.match(lines, [{ msg: 'top clients', requests: 1, refusals: 0, activeClients: 1, topByRequests: [{ client: '10.0.0.1', count: 1 }] }])
  fair.stop()
  t.equal(clock.pending, 0, 'no timer left')
})
