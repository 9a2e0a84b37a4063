// Benchmark 3: routes that need several chain requests, with 5 ms of chain latency. Latency
// should be about one chain round trip per dependent step (independent requests run at
// once), and the chain requests per client request should be what the route needs.
import type { Row, SuiteResult } from '../lib/report.js'
import { startEdge } from '../lib/servers.js'
import { ms, round } from '../lib/stats.js'
import { NODE_INFO_PATH, type Context } from './context.js'

const CHAIN_LATENCY_MS = 5

/** Dependent steps each route needs when the chain answers in CHAIN_LATENCY_MS (see the route's code). */
const ROUTES = [
  { path: '/v1/models', steps: 2, note: 'current epoch group, then every model sub-group at once' },
  { path: '/v1/pricing', steps: 2, note: 'current epoch group, then every model sub-group at once' },
  { path: '/v1/participants', steps: 2, note: 'two pages: page 2 needs page 1\'s next_key' }
] as const

export async function fanout (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  await ctx.sim.latency(CHAIN_LATENCY_MS)
  const edge = await startEdge(ctx.sim.url)
  const rows: Row[] = []
  const raw: Record<string, unknown> = { server: edge.label, chainLatencyMs: CHAIN_LATENCY_MS }
  try {
    // One chain round trip as edge-api's chain client sees it: the simulator, one request at a time.
    const direct = await ctx.load.run({ url: `${ctx.sim.url}${NODE_INFO_PATH}`, connections: 1, durationS: Math.min(2, ctx.runS) })
    const roundTrip = direct.p50
    raw.roundTrip = direct
    rows.push({ item: '3', what: `one chain round trip (simulator direct, ${CHAIN_LATENCY_MS} ms latency), p50`, value: ms(roundTrip), goal: 'reference', met: null })
    for (const route of ROUTES) {
      await ctx.load.run({ url: edge.url + route.path, connections: 1, amount: 5 })
      await ctx.sim.reset()
      const r = await ctx.load.run({ url: edge.url + route.path, connections: 1, durationS: Math.min(2, ctx.runS) })
      const chainRequests = await ctx.sim.count()
      const perClient = chainRequests / r.requests
      const trips = r.p50 / roundTrip
      raw[route.path] = { load: r, chainRequests, perClient, trips }
      const ok = r.non2xx === 0 && r.errors === 0 && r.requests > 0
      rows.push({
        item: '3',
        what: `${route.path} p50 (${route.note}), c=1`,
        value: ok ? `${ms(r.p50)} = ${round(trips, 2)} round trips` : `not measurable: status ${JSON.stringify(r.statusCodes)} (route not landed?)`,
        goal: `≈ ${route.steps} round trip${route.steps > 1 ? 's' : ''} (< ${route.steps + 0.5})`,
        met: ok ? trips < route.steps + 0.5 : null
      }, {
        item: '3',
        what: `${route.path} chain requests per client request`,
        value: ok ? `${round(perClient, 2)}` : 'n/a',
        goal: 'reported',
        met: null
      })
    }
  } finally {
    await edge.stop()
    await ctx.sim.clear()
  }
  return { name: 'fanout', rows, raw, seconds: (performance.now() - started) / 1000 }
}
