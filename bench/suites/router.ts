// Benchmark 11: the router's queue (issue 23, docs/router-queue.md). One edge-api replica
// (dist/main.js) behind a real HAProxy rendered from compose/router/haproxy.cfg.template:
// - the replica alone, closed loop at growing concurrency, on /v1/status and on a chain read
//   (simulator 5 ms per chain request): throughput X and mean latency R = N / X (Little's
//   law), the measurement behind EDGE_API_ROUTER_SERVER_MAXCONN ≈ capacity × latency;
// - three routers in front of that replica, the deployed defaults (per-server maxconn, timeout
//   queue and the queue's length bound: the router's queue), the same queue bounded by time
//   alone (EDGE_API_ROUTER_QUEUE_LENGTH=0) and EDGE_API_ROUTER_SERVER_MAXCONN=0 (no limit, no
//   queue: the template before issue 23); open loop (bench/lib/open-loop.ts, raw
//   sockets, latency from when each request was due) at 0.5×, 1×, 2× and 4× of the capacity
//   measured through the router, the two sides alternating, medians over the rounds.
// CPU_SPLIT (below) can pin the replica to one CPU and HAProxy and the load generator to
// another; capacity is always measured in the same layout as the load steps.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { Router } from '../../harness/haproxy.js'
import { freePorts } from '../../harness/ports.js'
import { renderRouterConfig } from '../../harness/router-config.js'
import { cpuSplit, pin, TASKSET, type CpuSplit } from '../lib/cpus.js'
import { Load, type OpenLoopResult } from '../lib/load.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { startMain } from '../lib/servers.js'
import { median, ms, percentile, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

const CONCURRENCY = [1, 2, 4, 8, 16, 32, 64, 128] as const
const MULTIPLES = [0.5, 1, 2, 4] as const
// As many as the open-loop runs use: on a loaded machine fewer closed-loop connections are
// bound by the round trip (N / R), not by the servers, and measure less than they can do.
const CAPACITY_CONNECTIONS = 1000
const CHAIN_LATENCY_MS = 5
const PAUSE_MS = 1000
const STATUS = ['/v1/status']
const CHAIN_READ = PARTICIPANTS.map((p) => `/v1/participants/${p.address}`)

export interface RouterProcess {
  readonly url: string
  readonly label: string
  /** Access-log lines written since the last call. */
  newLog (): Promise<string[]>
  stop (): Promise<void>
}

/** What the router's own log says about one run: how long its 503s (sQ) had waited in its queue. */
export interface RouterWaits {
  readonly queueTimeouts: number
  /** Requests refused 503 at once because the queue held EDGE_API_ROUTER_QUEUE_LENGTH (a deny: PR--). */
  readonly queueFull: number
  /** 503s the replica itself answered (its own load shedding), passed through by the router. */
  readonly replicaShed: number
  /** Tw (ms in the router's queue) of the requests answered 503 after timeout queue: p99, max. */
  readonly queueTimeoutWaitP99: number
  readonly queueTimeoutWaitMax: number
}

// httplog: … TR/Tw/Tc/Tr/Ta status bytes cookie cookie termination-state …
const ACCESS = /\s(-?\d+)\/(-?\d+)\/(-?\d+)\/(-?\d+)\/\+?(\d+) (\d{3}) \d+ \S+ \S+ (\S{4}) /

export function routerWaits (lines: readonly string[]): RouterWaits {
  const waits: number[] = []
  let queueFull = 0
  let replicaShed = 0
  for (const line of lines) {
    const m = ACCESS.exec(line)
    if (m !== null && m[7] === 'sQ--') waits.push(Number(m[2]))
    if (m !== null && m[7] === 'PR--' && m[6] === '503') queueFull++
    if (m !== null && m[7] === '----' && m[6] === '503') replicaShed++
  }
  const sorted = Float64Array.from(waits).sort()
  return { queueTimeouts: waits.length, queueFull, replicaShed, queueTimeoutWaitP99: percentile(sorted, 99), queueTimeoutWaitMax: sorted.length > 0 ? sorted[sorted.length - 1] as number : Number.NaN }
}

/** The deployed defaults, read from a rendering: the benchmark measures what is deployed. */
export function routerDefaults (): { maxconn: number, queueMs: number, length: number } {
  const config = renderRouterConfig({ EDGE_API_ROUTER_SERVERS: '127.0.0.1:1', EDGE_API_ROUTER_INIT_STATE: 'off' })
  const maxconn = /^\s*default-server maxconn (\d+)$/m.exec(config)?.[1]
  const queueMs = /^\s*timeout queue (\d+)ms$/m.exec(config)?.[1]
  const length = /queue\(edge_api_pool\) ge (\d+) \}$/m.exec(config)?.[1] ?? '0'
  return { maxconn: Number(maxconn), queueMs: Number(queueMs), length: Number(length) }
}

/**
 * HAProxy in front of `replica` (space-separated host:port), started as the tests start it
 * (harness/haproxy.ts), its access log to a file in `dir` read back after each run, under
 * taskset when `cpus` is given; resolves once a request through it is answered.
 */
export async function startRouter (dir: string, name: string, replica: string, settings: Record<string, string>, cpus?: string): Promise<RouterProcess> {
  const [port, metricsPort] = await freePorts(2) as [number, number]
  // Started under taskset, HAProxy sees one CPU and runs one thread (nbthread defaults to the CPUs it may use).
  const router = new Router(replica.split(' '), port, metricsPort, settings, {
    logFile: join(dir, `${name.replace(/\W+/g, '-')}.log`),
    ...(cpus === undefined ? {} : { under: [TASKSET, '-c', cpus] })
  })
  for (let i = 0; ; i++) {
    try {
      const res = await request(`${router.url}/v1/status`, { reset: true })
      await res.body.dump()
      if (res.statusCode === 200) break
    } catch {}
    if (i >= 200) {
      await router.stop()
      throw new Error(`haproxy (${name}) did not answer through ${router.url} within 10 s: ${router.stderr}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { url: router.url, label: name, newLog: async () => router.newLog(), stop: async () => router.stop() }
}

interface Knee { readonly n: number, readonly x: number, readonly r: number, readonly p50: number }

/**
 * The CPU layout (bench/lib/cpus.ts). true: the replica on one core, HAProxy (one thread) and
 * the load generator on the other, as a deployment gives the router its own core (fewer than
 * two CPUs or no taskset: nothing is pinned, and the layout row says so). false, the default
 * since it was measured: the split does not close the gap (BENCHMARKS.md, bench 11 runs 8–13): the bottleneck moves to the core
 * that HAProxy shares with the generator, and the length-bounded queue collapsed at 2× or 4×
 * in every pinned run whose step exceeded ~23 000 req/s; unpinned, they share both cores.
 */
export const CPU_SPLIT = false

export async function router (ctx: Context): Promise<SuiteResult> {
  return await routerBench(ctx, CPU_SPLIT ? cpuSplit(process.pid) : { reason: 'CPU_SPLIT off' })
}

/** Benchmark 11 in a given CPU layout (a split, or why there is none). */
export async function routerBench (ctx: Context, split: CpuSplit | { readonly reason: string }): Promise<SuiteResult> {
  const started = performance.now()
  const quick = ctx.runS < 2
  const openS = quick ? 1 : 3
  const rows: Row[] = []
  const raw: Record<string, unknown> = {}
  const defaults = routerDefaults()
  raw.defaults = defaults
  raw.cpus = split
  const pinned = 'server' in split ? split : undefined
  rows.push({
    item: '11',
    what: 'CPU layout of this benchmark (taskset)',
    value: 'reason' in split
      ? `not pinned (${split.reason}): the replica, HAProxy and the load generator share the machine's CPUs, so the router's and the generator's work under overload is taken from the replica, as no deployment would`
      : `replica on CPU ${split.server}; HAProxy (one thread) and the load generator on CPU ${split.clients}: the router has its own core, as in a deployment (capacity and every load step measured so)`,
    goal: 'reported',
    met: null
  })
  const dir = await mkdtemp(join(tmpdir(), 'edge-api-router-'))
  // A generator of its own, so pinning it leaves the other benchmarks' generator alone.
  const load = await Load.start()
  const edge = await startMain(ctx.sim.url).catch(async (err: Error) => { await load.stop(); throw err })
  const routers: RouterProcess[] = []
  try {
    if (pinned !== undefined) {
      pin(load.pid, pinned.clients)
      pin(edge.pid, pinned.server)
    }
    // 1. The replica alone: Little's law at each concurrency.
    const sweep: Record<string, Knee[]> = {}
    for (const [name, paths, latency] of [['GET /v1/status', STATUS, 0], [`GET /v1/participants/{address} (chain ${CHAIN_LATENCY_MS} ms)`, CHAIN_READ, CHAIN_LATENCY_MS]] as const) {
      if (latency > 0) await ctx.sim.latency(latency)
      const points: Knee[] = []
      await load.open({ origin: edge.url, paths, rate: 0, durationS: ctx.warmupS, connections: 64 })
      for (const n of CONCURRENCY) {
        progress(`${name}, ${n} connections closed loop`)
        const r = await load.open({ origin: edge.url, paths, rate: 0, durationS: ctx.runS, connections: n })
        points.push({ n, x: r.goodput, r: n / r.goodput * 1000, p50: r.p50 })
      }
      await ctx.sim.clear()
      sweep[name] = points
      const capacity = Math.max(...points.map((p) => p.x))
      // The knee: the least concurrency that reaches 90% of the capacity; more only queues inside the replica.
      const knee = points.find((p) => p.x >= 0.9 * capacity) as Knee
      rows.push({
        item: '11',
        what: `replica alone, ${name}, closed loop: connections → 2xx/s (mean latency R = N / X)`,
        value: points.map((p) => `${p.n} → ${round(p.x, 0)} (${round(p.r, 2)} ms)`).join(', '),
        goal: 'reported',
        met: null
      }, {
        item: '11',
        what: `${name}: capacity X; the knee (least N reaching 0.9 X) and its latency R; Little's law X × R`,
        value: `X ${round(capacity, 0)}/s; knee N ${knee.n}, R ${round(knee.r, 2)} ms; X × R = ${round(capacity * knee.r / 1000, 1)}`,
        goal: `reported (EDGE_API_ROUTER_SERVER_MAXCONN = ${defaults.maxconn})`,
        met: null
      })
    }
    raw.sweep = sweep

    // 2. Through the router, with and without its queue.
    const replica = edge.url.replace('http://', '')
    const queued = await startRouter(dir, `queue (maxconn ${defaults.maxconn}, timeout queue ${defaults.queueMs} ms, length ${defaults.length})`, replica, {}, pinned?.clients)
    routers.push(queued)
    const timeOnly = await startRouter(dir, 'queue bounded by time alone (length 0)', replica, { EDGE_API_ROUTER_QUEUE_LENGTH: '0' }, pinned?.clients)
    routers.push(timeOnly)
    const unlimited = await startRouter(dir, 'no queue (maxconn 0)', replica, { EDGE_API_ROUTER_SERVER_MAXCONN: '0' }, pinned?.clients)
    routers.push(unlimited)
    // Capacity: the most either router gets through closed loop. Without the queue the replica
    // takes all the connections at once and sheds part of them (2xx only count), so the larger
    // figure is the stack's capacity; the ladder offers both sides the same rates.
    const capacities: Record<string, number> = {}
    for (const side of [unlimited, queued]) {
      progress(`capacity through the router, ${side.label}`)
      await load.open({ origin: side.url, paths: STATUS, rate: 0, durationS: ctx.warmupS, connections: CAPACITY_CONNECTIONS })
      capacities[side.label] = (await load.open({ origin: side.url, paths: STATUS, rate: 0, durationS: ctx.runS, connections: CAPACITY_CONNECTIONS })).goodput
    }
    const capacity = Math.max(...Object.values(capacities))
    raw.capacity = capacities
    // The ladder reads each router's log run by run: skip what the capacity runs wrote.
    const sides = [queued, timeOnly, unlimited]
    for (const side of sides) await side.newLog()
    const ladder = new Map<string, OpenLoopResult[][]>(sides.map((s) => [s.label, MULTIPLES.map(() => [])]))
    const waits = new Map<RouterProcess, RouterWaits[][]>([queued, timeOnly].map((s) => [s, MULTIPLES.map(() => [])]))
    for (let round = 0; round < ctx.rounds; round++) {
      for (const [i, k] of MULTIPLES.entries()) {
        // Each multiple rotates which side goes first, round after round.
        const shift = (round + i) % sides.length
        const order = [...sides.slice(shift), ...sides.slice(0, shift)]
        for (const side of order) {
          progress(`round ${round + 1}, ${k}× capacity, ${side.label}`)
          const r = await load.open({ origin: side.url, paths: STATUS, rate: k * capacity, durationS: openS })
          ladder.get(side.label)?.[i]?.push(r)
          // What a side still holds must not spill into the next run.
          await new Promise((resolve) => setTimeout(resolve, PAUSE_MS))
          const lines = await side.newLog()
          waits.get(side)?.[i]?.push(routerWaits(lines))
        }
      }
    }
    raw.ladder = Object.fromEntries(ladder)
    raw.routerWaits = Object.fromEntries([...waits].map(([side, w]) => [side.label, w]))
    rows.push(...ladderRows(capacities, defaults.queueMs, ladder, sides.map((s) => s.label), ctx.rounds))
    for (const [side, sideWaits] of waits) {
      const wait = (i: number, pick: (w: RouterWaits) => number): number => median((sideWaits[i] ?? []).map(pick).filter(Number.isFinite))
      rows.push({
        item: '11',
        what: `router ${side.label}, its own log at 2× and 4× (medians): requests refused at once, queue full (PR); 503s of the replica's own shedding passed through; answered 503 after timeout queue (sQ), and how long those had waited in its queue (Tw p99 / max)`,
        value: [2, 3].map((i) => `${MULTIPLES[i]}×: ${round(wait(i, (w) => w.queueFull), 0)} full; ${round(wait(i, (w) => w.replicaShed), 0)} replica 503; ${round(wait(i, (w) => w.queueTimeouts), 0)} sQ, ${ms(wait(i, (w) => w.queueTimeoutWaitP99))} / ${ms(wait(i, (w) => w.queueTimeoutWaitMax))}`).join('; '),
        goal: `Tw ≤ timeout queue + 20% (${round(defaults.queueMs * 1.2, 0)} ms)`,
        met: [2, 3].every((i) => !(wait(i, (w) => w.queueTimeoutWaitMax) > defaults.queueMs * 1.2))
      })
    }
  } finally {
    for (const r of routers) await r.stop()
    await edge.stop()
    await load.stop()
    await rm(dir, { recursive: true, force: true })
  }
  return { name: 'router', rows, raw, seconds: (performance.now() - started) / 1000 }
}

function ladderRows (capacities: Record<string, number>, queueMs: number, ladder: Map<string, OpenLoopResult[][]>, labels: readonly string[], rounds: number): Row[] {
  const [queued, timeOnly, unlimited] = labels as [string, string, string]
  const capacity = Math.max(...Object.values(capacities))
  const med = (label: string, i: number, pick: (r: OpenLoopResult) => number): number =>
    median((ladder.get(label)?.[i] ?? []).map(pick).filter(Number.isFinite))
  const describe = (label: string, i: number): string => {
    const lag = med(label, i, (r) => r.sendLagP99)
    const unanswered = med(label, i, (r) => r.unanswered)
    return `${ratio(med(label, i, (r) => r.goodput) / capacity)} cap, shed ${round(med(label, i, (r) => r.shed) * 100, 1)}%, ` +
      `p99 ${ms(med(label, i, (r) => r.p99))}` + (med(label, i, (r) => r.shed) > 0 ? `, 503 p99 ${ms(med(label, i, (r) => r.shedP99))}` : '') +
      (unanswered > 0 ? `, ${unanswered} unanswered` : '') + (lag > 5 ? ` (generator late ${ms(lag)})` : '')
  }
  const rows: Row[] = [{
    item: '11',
    what: `GET /v1/status 2xx/s through the router (closed loop, ${CAPACITY_CONNECTIONS} connections): with its queue \\| without; the larger is the capacity the ladder multiplies`,
    value: `${round(capacities[queued] as number, 0)} \\| ${round(capacities[unlimited] as number, 0)}`,
    goal: 'reported',
    met: null
  }]
  MULTIPLES.forEach((k, i) => {
    rows.push({
      item: '11',
      what: `GET /v1/status open loop at ${k}× capacity (${round(k * capacity, 0)} req/s), median of ${rounds}: router with its queue \\| queue bounded by time alone \\| no queue`,
      value: `${describe(queued, i)} \\| ${describe(timeOnly, i)} \\| ${describe(unlimited, i)}`,
      goal: 'reported',
      met: null
    })
  })
  for (const label of labels) {
    const half = med(label, 0, (r) => r.p99)
    const double = med(label, 2, (r) => r.p99)
    rows.push({
      item: '11',
      what: `router ${label}: served p99 at 2× / at 0.5×`,
      value: `${ms(double)} / ${ms(half)} = ${ratio(double / half)}`,
      goal: label === queued ? '≤ 5×' : 'reported (the baseline)',
      met: label === queued ? double / half <= 5 : null
    })
  }
  rows.push({
    item: '11',
    what: 'the generator with the router\'s queue at 2× and 4× (medians): target rate; scheduled per second of the schedule; written to a socket during the schedule (the rest waited for a free connection, their latency counted from when they were due); its own lateness p99',
    value: [2, 3].map((i) => `${MULTIPLES[i]}×: ${round((MULTIPLES[i] as number) * capacity, 0)}; ${round(med(queued, i, (r) => r.offered), 0)}; ${round(med(queued, i, (r) => r.sentDuringSchedule), 0)}; ${ms(med(queued, i, (r) => r.sendLagP99))}`).join('; '),
    goal: 'reported (scheduled ≈ target: the schedule was kept)',
    met: null
  })
  const good2 = med(queued, 2, (r) => r.goodput) / capacity
  const good4 = med(queued, 3, (r) => r.goodput) / capacity
  // Latency counts from when a request was due, so it includes the generator's own lateness.
  const overloaded = [2, 3].map((i) => ({ shed: med(queued, i, (r) => r.shedP99), lag: med(queued, i, (r) => r.sendLagP99) }))
  const worst = overloaded.filter((x) => Number.isFinite(x.shed)).sort((a, b) => b.shed - a.shed)[0]
  rows.push({
    item: '11',
    what: 'router with its queue: goodput / capacity at 2×, at 4×',
    value: `${ratio(good2)}, ${ratio(good4)}`,
    goal: '≥ 0.9× at 2×, ≥ 0.85× at 4×',
    met: good2 >= 0.9 && good4 >= 0.85
  }, {
    item: '11',
    what: `router with its queue: 503 p99 at 2× and 4× (the larger median; the generator's own lateness p99 in brackets) against timeout queue (${queueMs} ms)`,
    value: worst === undefined ? 'no 503' : `${ms(worst.shed)} (${ms(worst.lag)})`,
    goal: '≤ timeout queue + 20% + the generator\'s lateness',
    met: worst === undefined ? null : worst.shed <= queueMs * 1.2 + worst.lag
  })
  return rows
}

function progress (step: string): void {
  process.stderr.write(`  router: ${step}\n`)
}
