// Benchmark 18: behind an operator's own proxy (issue 52). Benchmark 16's scenario (twenty polite
// clients, then one heavy client of 4,096 connections beside them; harness/polite-beside-heavy.ts)
// on one replica (dist/main.js as deployed, trusting the proxy's X-Forwarded-For), reached
// directly, and through a plain HAProxy with no per-client rules, as a Kubernetes ingress is
// (harness/operator-proxy.ts): with HAProxy's defaults, and with the settings
// docs/clients-and-limits.md asks of such a proxy (keep its connections to the replicas open
// for reuse whatever it holds). Each row also counts the proxy's connections to the replica:
// the share of requests that needed a new one.
import { freePorts } from '../../harness/ports.js'
import { OperatorProxy, PROXY_KEEPS_CONNECTIONS } from '../../harness/operator-proxy.js'
import { p99, POLITE, politeBesideHeavy, politeBound } from '../../harness/polite-beside-heavy.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { startMain } from '../lib/servers.js'
import { round } from '../lib/stats.js'
import type { Context } from './context.js'

type Route = 'directly' | 'through the proxy (HAProxy defaults)' | 'through the proxy (keeps its connections)'
const ROUTES: readonly Route[] = ['directly', 'through the proxy (HAProxy defaults)', 'through the proxy (keeps its connections)']

export async function operatorProxy (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const rows: Row[] = []
  const raw: Record<string, unknown> = {}
  const seconds = Math.max(3, ctx.runS * 2)
  const connections = ctx.runS < 2 ? 1024 : 4096
  await ctx.sim.latency(5)
  // Benchmark 16's chain: a block a second.
  await ctx.sim.blockEvery(1000)
  try {
    for (const route of ROUTES) rows.push(await row(ctx.sim.url, route, connections, seconds, raw))
  } finally {
    await ctx.sim.blockEvery(0)
    await ctx.sim.clear()
  }
  return { name: 'operator-proxy', rows, raw, seconds: (performance.now() - started) / 1000 }
}

async function row (chainUrl: string, route: Route, connections: number, seconds: number, raw: Record<string, unknown>): Promise<Row> {
  process.stderr.write(`bench 18: ${route}, heavy ${connections}\n`)
  const server = await startMain(chainUrl, { EDGE_API_SHED_DELAY: '20ms', EDGE_API_CACHE_SIZE: '64MiB', EDGE_API_TRUSTED_PROXIES: '127.0.0.1' }, 'ignore')
  const proxy = route === 'directly'
    ? undefined
    : await OperatorProxy.start((await freePorts(1))[0] as number, [new URL(server.url).host], { global: route === 'through the proxy (keeps its connections)' ? PROXY_KEEPS_CONNECTIONS : [] })
  const children: Array<() => void> = []
  try {
    const before = await proxy?.upstream()
    const { alone, beside, heavy } = await politeBesideHeavy(proxy?.url ?? server.url, connections, seconds - 1, seconds - 1, (kill) => children.push(kill))
    const after = await proxy?.upstream()
    const ok = beside.statuses.filter((s) => s >= 200 && s < 300).length
    const opened = before === undefined || after === undefined ? undefined : (after.opened - before.opened) / Math.max(1, after.opened - before.opened + after.reused - before.reused)
    raw[`${route} ${connections}`] = { alone: { p99: p99(alone.ms) }, beside: { total: beside.statuses.length, ok, p99: p99(beside.ms) }, heavy, upstreamOpenedPerRequest: opened }
    return {
      item: '18',
      what: `${route}: ${POLITE} polite clients beside a heavy one of ${connections} connections: polite 2xx, p99 (alone); heavy by status; the proxy's requests on a new connection to the replica`,
      value: `${ok}/${beside.statuses.length}, ${round(p99(beside.ms), 0)} ms (${round(p99(alone.ms), 0)} ms); ${JSON.stringify(heavy.byStatus)}` +
        (opened === undefined ? '' : `; ${round(100 * opened, 1)}% new`),
      goal: 'polite ≥ 99.9% 2xx, p99 ≤ max(3× alone, alone + 30 ms); heavy refused 429',
      met: ok >= 0.999 * beside.statuses.length && p99(beside.ms) <= politeBound(p99(alone.ms)) && (heavy.byStatus['429'] ?? 0) > 0
    }
  } finally {
    for (const kill of children) kill()
    await proxy?.stop()
    await server.stop()
  }
}
