// Benchmark 8: what Prometheus metrics cost per request (issue 13): the same edge-api app
// (service.ts, from dist/) with metrics on (request hooks, in-flight gauge, a listener on its
// own port) and off (EDGE_API_METRICS_PORT=off: no hooks at all), side by side.
import { alternate, med } from '../lib/rounds.js'
import type { SuiteResult } from '../lib/report.js'
import { cpuMs, startEdgeApp, type Server } from '../lib/servers.js'
import { median, ms, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

type RegistryModule = typeof import('../../src/metrics/registry.js')

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
    const hooksUs = await hookCost()
    const hooksShare = hooksUs / cpu.off
    return {
      name: 'metrics',
      seconds: (performance.now() - started) / 1000,
      raw: { connections: CONNECTIONS, rounds: Object.fromEntries(m), cpuUsPerRequest: cpu, pairRatios, hooksUs, rps, p99 },
      rows: [
        {
          item: '9',
          what: `GET /v1/status, CPU per request of the server process: metrics on / off (${CONNECTIONS} connections; median of ${pairRatios.length} back-to-back pairs: ${pairRatios.map((r) => r.toFixed(2)).join(', ')})`,
          value: `${round(cpu.on, 1)} µs / ${round(cpu.off, 1)} µs (medians); pairs ${ratio(cpuRatio)} (cost ${round((cpuRatio - 1) * 100, 1)}%)`,
          goal: 'cost < 5% (< 1.05×)',
          met: cpuRatio < 1.05
        },
        {
          item: '9',
          what: 'the metrics work of one request alone (in-flight up and down, a response \'close\' listener, one histogram observation), in process, over the CPU per request with metrics off',
          value: `${round(hooksUs, 2)} µs / ${round(cpu.off, 1)} µs = ${round(hooksShare * 100, 1)}%`,
          goal: '< 5%',
          met: hooksShare < 0.05
        },
        {
          item: '9',
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

/**
 * CPU microseconds of what the request hooks do per request (src/metrics/requests.ts), from
 * dist/, in this process: a figure the machine's noise hardly moves. Fastify's own cost of
 * running two more hooks is not in it; the end-to-end row above has it.
 */
async function hookCost (): Promise<number> {
  const { Metrics } = await import(new URL('../../dist/metrics/registry.js', import.meta.url).href) as RegistryModule
  const { EventEmitter } = await import('node:events')
  const metrics = new Metrics()
  const ended = (): void => { metrics.requestEnded() }
  const n = 200_000
  const runs: number[] = []
  for (let run = 0; run < 5; run++) {
    const before = process.cpuUsage()
    for (let i = 0; i < n; i++) {
      metrics.requestStarted()
      const response = new EventEmitter()
      response.on('close', ended)
      response.emit('close')
      metrics.requestAnswered('GET', '/v1/status', 200, 0.0012)
    }
    const used = process.cpuUsage(before)
    runs.push((used.user + used.system) / n)
  }
  return median(runs)
}
