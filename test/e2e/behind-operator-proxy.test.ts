// Issue 52, "Behind an operator's own proxy": issue 41's scenario (twenty polite clients, then a
// heavy client beside them) through a plain HAProxy with no per-client rules, as a Kubernetes
// ingress is (harness/operator-proxy.ts), with the replica (dist/main.js as deployed) trusting
// its X-Forwarded-For and the proxy set as docs/clients-and-limits.md asks: its connections to
// the replicas kept for reuse however many it holds. Asserted: what cannot flake on a loaded
// two-core machine. The polite clients are never refused while the heavy one is, and the proxy
// reuses its connections to the replica instead of opening one per request (with HAProxy's
// defaults it opens one for nearly every request: 4,028 for 4,250 here, and this test fails).
// 1,024 heavy connections in front of a proxy of maxconn 3,000 put HAProxy past its
// idle-connection ratio as 4,096 do beside 9,000 (benchmark 18), at a quarter of the storm.
import { mkdtempSync, openSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { requireTool } from '../fixtures/deploy/tools.js'
import { BlockClock } from '../../harness/chain-simulator/block-clock.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { spawnMain } from '../../harness/main-process.js'
import { OperatorProxy, PROXY_KEEPS_CONNECTIONS } from '../../harness/operator-proxy.js'
import { p99, politeBesideHeavy } from '../../harness/polite-beside-heavy.js'
import { freePorts } from '../../harness/ports.js'
import { until } from '../../harness/wait.js'

t.setTimeout(240_000)

const HEAVY = 1024
/** The proxy's maxconn: HAProxy's idle-connection ratio (20% of its descriptors) then falls below the 2 x 1,024 the heavy client makes it use, as 4,096 do beside 9,000. */
const PROXY_MAXCONN = 3000

t.test('through an operator\'s proxy with no per-client rules, a heavy client of 1,024 connections is refused and twenty polite ones never are; the proxy reuses its connections to the replica', async (t) => {
  if (!requireTool(t, 'haproxy', 'the operator\'s proxy')) return
  const clock = new BlockClock()
  clock.every(1000)
  const sim = await startChainSimulator(0, { clock })
  t.teardown(async () => {
    clock.stop()
    await sim.close()
  })
  sim.latency(5)
  const [port, proxyPort] = await freePorts(2) as [number, number]
  const dir = mkdtempSync(join(tmpdir(), 'operator-proxy-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const main = spawnMain({
    CHAIN_REST_URL: sim.url,
    EDGE_API_PORT: String(port),
    EDGE_API_HOST: '127.0.0.1',
    EDGE_API_DRAIN_ANNOUNCE: '0',
    EDGE_API_LOG_LEVEL: 'info',
    EDGE_API_METRICS_PORT: 'off',
    EDGE_API_TRUSTED_PROXIES: '127.0.0.1'
  }, { stdout: openSync(join(dir, 'replica.log'), 'w') })
  t.teardown(() => main.child.kill('SIGKILL'))
  const replica = `127.0.0.1:${port}`
  await until(async () => (await fetch(`http://${replica}/readyz`).catch(() => undefined))?.ok === true, 'the replica ready', { intervalMs: 50 })
  const proxy = await OperatorProxy.start(proxyPort, [replica], { maxconn: PROXY_MAXCONN, global: PROXY_KEEPS_CONNECTIONS })
  t.teardown(() => proxy.stop())

  const before = await proxy.upstream()
  const { alone, beside, heavy } = await politeBesideHeavy(proxy.url, HEAVY, 3, 4, (kill) => t.teardown(kill))
  const after = await proxy.upstream()
  t.comment(`polite p99 ${p99(alone.ms).toFixed(1)} ms alone, ${p99(beside.ms).toFixed(1)} ms beside (benchmark 18 judges latency); heavy: ${JSON.stringify(heavy)}`)
  // Never refused as a client's excess (429); the replica's own overload (503, its delay-based
  // shedding) is the machine's, not the heavy client's: a fresh-clone run beside the rest of the
  // suite saw one among 222. With HAProxy's defaults none of them is answered at all (0 of 20).
  const answered = beside.statuses.filter((s) => s >= 200 && s < 300).length
  t.same(beside.statuses.filter((s) => s === 429), [], 'no polite read refused as a client\'s excess (429)')
  t.ok(answered >= 0.9 * beside.statuses.length, `beside the heavy client, ${answered} of ${beside.statuses.length} polite reads 2xx (at least 90%)`)
  t.ok(beside.statuses.length >= 20, 'and the polite clients read')
  t.ok((heavy.byStatus['429'] ?? 0) > 0, `the heavy client refused 429 by the replica, through the proxy (${heavy.byStatus['429'] ?? 0})`)
  t.equal(heavy.retryAfter, heavy.byStatus['429'], 'each with Retry-After')
  // Each of the heavy client's 4,096 connections (and the polite clients' few) opens one to the
  // replica for its first request; after that, with the settings, they are reused: measured 0-1%
  // of the requests opened one past those. With HAProxy's defaults every request opens one.
  const opened = after.opened - before.opened - HEAVY
  const requests = after.opened + after.reused - before.opened - before.reused - HEAVY
  t.ok(opened < requests / 4, `the proxy reused its connections to the replica: ${opened} opened beyond the first ones, for ${requests} requests`)
})
