// Issue 41's scenario on real sockets, as deployed (dist/main.js with its defaults: load
// shedding at the default target, the answer cache on; a chain answering in 5 ms with a block a
// second): twenty polite clients, each from its own loopback address and on its own
// keep-alive connections, read four times a second; then one heavy client (a process of its
// own, one address) runs a closed loop of cache-missing reads on 1,024 connections
// beside them, directly and through the router as compose ships it. The polite clients keep
// their answers; the heavy client's excess is refused with 429 +
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

// What this file guards, each a property that fails when fair share is off and cannot flake on a
// loaded machine: the polite clients keep their answers (2xx) beside the heavy one, whose excess
// is refused 429 + Retry-After; alone, the heavy client is never refused as a client's excess.
// What it measures (the polite p99 against issue 41's bound, 4,096 connections, the lone client's
// answers/s against the same connections as sixteen clients) is benchmark 16 (npm run bench --
// --only=16; BENCHMARKS.md): a p99 or a ratio on a shared two-core machine is a measurement.
// The phase alone is only reported (its p99 is benchmark 16's base): one second, not two. Beside
// the heavy client, three seconds of twenty clients at four reads a second (240 reads, each 2xx
// asked; at two, load average 19 failed it twice through the router with 5 and 74 polite 503s
// of ~150, the router's server UP: perhaps the machine's, but not shortened on that doubt).
// This file runs by itself in npm test (test/loader/run.mjs's ALONE): each second is the suite's.
const ALONE_S = 1
const BESIDE_S = 3
/** How long the heavy client alone runs: long enough to be judged over a share, were there one to judge. */
const HEAVY_ALONE_S = 2
const CONNECTIONS = 1024

t.setTimeout(240_000)

/** A closed loop of cache-missing reads from `address` on `connections` connections for `seconds`. */
async function heavyClient (t: Test, origin: string, address: string | undefined, connections: number, seconds: number): Promise<HeavyTotals> {
  const heavy = startHeavyClient(origin, connections, seconds, address)
  t.teardown(() => heavy.child.kill('SIGKILL'))
  return await within(heavy.totals, `the heavy client's totals after its ${seconds} s`, (seconds + 60) * 1000)
}

/** The polite clients alone, then beside the heavy one (once: nothing here is a bound on time). */
async function beside (t: Test, origin: string, connections: number): Promise<PoliteBesideHeavy> {
  return await politeBesideHeavy(origin, connections, ALONE_S, BESIDE_S, (kill) => t.teardown(kill))
}

function countBy (values: number[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1
  return counts
}

/** What issue 41 asks of the polite clients and the heavy one: asserted where it cannot flake, the p99 reported (benchmark 16 judges it). */
function judge (t: Test, { alone, beside, heavy }: PoliteBesideHeavy, refusedBy: string): void {
  const ok = beside.statuses.filter((s) => s >= 200 && s < 300).length
  t.comment(`alone: ${alone.statuses.length} polite reads, p99 ${p99(alone.ms).toFixed(1)} ms; beside: p99 ${p99(beside.ms).toFixed(1)} ms (issue 41's bound ${politeBound(p99(alone.ms)).toFixed(1)} ms: benchmark 16); heavy: ${JSON.stringify(heavy)}`)
  t.ok(beside.statuses.length > 0, 'the polite clients read beside the heavy client')
  t.ok(ok / beside.statuses.length >= 0.999, `beside the heavy client: ${ok} of ${beside.statuses.length} polite reads 2xx (${JSON.stringify(countBy(beside.statuses))})`)
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

t.test(`directly to a replica, a heavy client of ${CONNECTIONS} connections beside twenty polite ones: the polite keep their answers, the heavy excess gets 429`, async (t) => {
  const { origin } = await serveReplica(t, await simulator(t))
  judge(t, await beside(t, origin, CONNECTIONS), 'the replica')
})

t.test(`through the router as compose ships it, a heavy client of ${CONNECTIONS} connections beside twenty polite ones`, async (t) => {
  if (!requireTool(t, 'haproxy', 'fairness through the router')) return
  const { origin } = await serveReplica(t, await simulator(t), { EDGE_API_TRUSTED_PROXIES: '127.0.0.1' })
  const [port, metricsPort] = await freePorts(2) as [number, number]
  // The per-client limits as compose ships them (the loopback router turns them off by default).
  const router = new Router([new URL(origin).host], port, metricsPort, { EDGE_API_ROUTER_INIT_STATE: 'off', ...composeClientLimits() })
  t.teardown(() => router.stop())
  await router.allUp(1)
  const result = await beside(t, router.url, CONNECTIONS)
  // A replica whose /readyz misses the router's check (3 s) is out of rotation (fall 1): its
  // polite reads are then the router's 503s. Said, for a failure on a starved machine.
  t.comment(`the router marked the replica: ${router.events.map((e) => e.state).join(', ') || 'nothing (UP throughout)'}`)
  judge(t, result, 'the router and the replica')
  // The router holds its 429s a second (tarpit): a closed loop is slowed to about one answer
  // per connection a second (answered at once: 12,000 a second on 1,024 connections).
  t.ok(result.heavy.perSecond <= 1.5 * CONNECTIONS, `the heavy client through the router: ${Math.round(result.heavy.perSecond)} answers/s on ${CONNECTIONS} connections`)
})

t.test('alone, the heavy client gets the replica: answered, and none of its requests refused as a client\'s excess', async (t) => {
  // The heavy client sends from an address of 127.1.0.0/16 (harness/heavy-client.ts).
  const replica = await serveReplica(t, await simulator(t), { EDGE_API_TRUSTED_PROXIES: '127.1.0.0/16' })
  const { byStatus } = await heavyClient(t, replica.origin, undefined, CONNECTIONS, HEAVY_ALONE_S)
  replica.stop()
  t.equal(byStatus['429'], undefined, `alone: none refused as a client's excess (${JSON.stringify(byStatus)})`)
  // What the replica sheds as its own overload (503) depends on the CPU a loaded machine leaves it.
  t.ok((byStatus['200'] ?? 0) + (byStatus['404'] ?? 0) > 0, `alone: answered (${JSON.stringify(byStatus)})`)
  // Its answers/s against the same connections as sixteen clients (what fair share takes from a
  // lone client), and the share refused as the replica's own overload: benchmark 16.
})
