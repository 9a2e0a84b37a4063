// Benchmark 8: what Prometheus metrics cost per request (issue 13): the same edge-api app
// (service.ts, from dist/) with metrics on (request hooks, in-flight gauge, a listener on its
// own port) and off (EDGE_API_METRICS_PORT=off: no hooks at all), side by side.
import { alternate, med } from '../lib/rounds.js'
import type { SuiteResult } from '../lib/report.js'
import { cpuMs, startEdgeApp, type Server } from '../lib/servers.js'
import { median, ms, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

const CONNECTIONS = 10
/** The cost is a few percent at most: more rounds than the other suites, so the median holds on a noisy machine. */
const ROUNDS_FACTOR = 3
/** A fresh process is still compiling: warm each run up for at least this long. */
const MIN_WARMUP_S = 1

/**
 * The goal is read on CPU time per request (utime + stime of the server process over the
 * measured run / requests answered), not on answers per second: on a shared 2-core machine
 * throughput swings by tens of percent between back-to-back runs, while the CPU a process
 * spends on a request hardly depends on who else is running.
 */
export async function metrics (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  // Shedding off on both sides: a saturated run measures the work, not how many 503s fit.
  const on = await startEdgeApp(ctx.sim.url, true, false, undefined, true)
  const off = await startEdgeApp(ctx.sim.url, true, false, undefined, false)
  try {
    const contender = (label: string, server: Server) => {
      let before = 0
      return {
        label,
        options: { url: `${server.url}/v1/status`, connections: CONNECTIONS, durationS: ctx.runS },
        before: async () => { before = await cpuMs(server.pid) },
        // CPU microseconds per request of this run.
        after: async (result: { requests: number }) => (await cpuMs(server.pid) - before) * 1000 / result.requests
      }
    }
    const m = await alternate(ctx.load, ctx.rounds * ROUNDS_FACTOR, Math.max(ctx.warmupS, MIN_WARMUP_S), [contender('on', on), contender('off', off)])
    const cpuOn = m.get('on')?.extra ?? []
    const cpuOff = m.get('off')?.extra ?? []
    const cpu = { on: median(cpuOn), off: median(cpuOff) }
    // Each round's two runs are back to back (ABBA): the median of their ratios is the least drift-prone figure.
    const pairRatios = cpuOn.map((on, i) => on / (cpuOff[i] as number))
    const rps = { on: med(m.get('on'), (r) => r.rps), off: med(m.get('off'), (r) => r.rps) }
    const p99 = { on: med(m.get('on'), (r) => r.p99), off: med(m.get('off'), (r) => r.p99) }
    const cpuRatio = median(pairRatios)
    return {
      name: 'metrics',
      seconds: (performance.now() - started) / 1000,
      raw: { connections: CONNECTIONS, rounds: Object.fromEntries(m), cpuUsPerRequest: cpu, pairRatios, rps, p99 },
      rows: [
        {
          item: '8',
          what: `GET /v1/status, CPU per request of the server process: metrics on / off (${CONNECTIONS} connections; median of ${pairRatios.length} back-to-back pairs: ${pairRatios.map((r) => r.toFixed(2)).join(', ')})`,
          value: `${round(cpu.on, 1)} µs / ${round(cpu.off, 1)} µs (medians); pairs ${ratio(cpuRatio)} (cost ${round((cpuRatio - 1) * 100, 1)}%)`,
          goal: 'cost < 5% (< 1.05×)',
          met: cpuRatio < 1.05
        },
        {
          item: '8',
          what: 'GET /v1/status answers/s and p99: metrics on / off (noisy on a shared machine)',
          value: `${round(rps.on, 0)} / ${round(rps.off, 0)} = ${ratio(rps.on / rps.off)}; ${ms(p99.on)} / ${ms(p99.off)}`,
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
