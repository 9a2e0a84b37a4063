// Benchmark 8: what Prometheus metrics cost per request (issue 13): the same edge-api app
// (service.ts, from dist/) with metrics on (request hooks, in-flight gauge, a listener on its
// own port) and off (EDGE_API_METRICS_PORT=off: no hooks at all), side by side.
import { alternate, med } from '../lib/rounds.js'
import type { SuiteResult } from '../lib/report.js'
import { startEdgeApp } from '../lib/servers.js'
import { ms, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

const CONNECTIONS = 50
/** The cost is a few percent at most: more rounds than the other suites, so the median holds on a noisy machine. */
const ROUNDS_FACTOR = 2

export async function metrics (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  // Shedding off on both sides: a saturated run measures the work, not how many 503s fit.
  const on = await startEdgeApp(ctx.sim.url, true, false, undefined, true)
  const off = await startEdgeApp(ctx.sim.url, true, false, undefined, false)
  try {
    const options = (url: string) => ({ url: `${url}/v1/status`, connections: CONNECTIONS, durationS: ctx.runS })
    const m = await alternate(ctx.load, ctx.rounds * ROUNDS_FACTOR, ctx.warmupS, [
      { label: 'on', options: options(on.url) },
      { label: 'off', options: options(off.url) }
    ])
    const rps = { on: med(m.get('on'), (r) => r.rps), off: med(m.get('off'), (r) => r.rps) }
    const p99 = { on: med(m.get('on'), (r) => r.p99), off: med(m.get('off'), (r) => r.p99) }
    // Per-round ratios too: each pair ran back to back, so their median is the least noisy figure.
    const pairs = (m.get('on')?.runs ?? []).map((r, i) => r.rps / ((m.get('off')?.runs[i]?.rps) ?? Number.NaN))
    const rpsRatio = rps.on / rps.off
    const cost = 1 - rpsRatio
    return {
      name: 'metrics',
      seconds: (performance.now() - started) / 1000,
      raw: { connections: CONNECTIONS, rounds: Object.fromEntries(m), rps, p99, pairRatios: pairs },
      rows: [
        {
          item: '8',
          what: `GET /v1/status answers/s, ${CONNECTIONS} connections: metrics on / off (medians of ${pairs.length} rounds; per-round ratios ${pairs.map((p) => p.toFixed(3)).join(', ')})`,
          value: `${round(rps.on, 0)} / ${round(rps.off, 0)} = ${ratio(rpsRatio)} (cost ${round(cost * 100, 1)}%)`,
          goal: 'cost < 5% (≥ 0.95×)',
          met: rpsRatio >= 0.95
        },
        {
          item: '8',
          what: 'GET /v1/status p99: metrics on / off',
          value: `${ms(p99.on)} / ${ms(p99.off)} = ${ratio(p99.on / p99.off)}`,
          goal: '—',
          met: null
        }
      ]
    }
  } finally {
    await on.stop()
    await off.stop()
  }
}
