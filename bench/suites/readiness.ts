// Benchmark 4: a storm of readiness checks costs one chain probe per 3 s, and a cached
// /readyz answers fast.
import { request } from 'undici'
import type { Row, SuiteResult } from '../lib/report.js'
import { startEdge } from '../lib/servers.js'
import { ms, round } from '../lib/stats.js'
import { NODE_INFO_PATH, type Context } from './context.js'

const STORM_CONNECTIONS = 500
const STORM_S = 7
const CACHE_S = 3

export async function readiness (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const edge = await startEdge(ctx.sim.url)
  const rows: Row[] = []
  const raw: Record<string, unknown> = { server: edge.label }
  try {
    const probe = await request(`${edge.url}/readyz`)
    await probe.body.dump()
    if (probe.statusCode === 404) {
      rows.push({ item: '4', what: '/readyz', value: 'not measurable: /readyz answers 404 (not landed)', goal: '', met: null })
      return { name: 'readiness', rows, raw, seconds: (performance.now() - started) / 1000 }
    }
    // A fresh cache window, then the storm: the first check starts the first probe.
    await new Promise((resolve) => setTimeout(resolve, CACHE_S * 1000 + 100))
    await ctx.sim.reset()
    const storm = await ctx.load.run({ url: `${edge.url}/readyz`, connections: STORM_CONNECTIONS, durationS: STORM_S })
    const probes = await ctx.sim.count(NODE_INFO_PATH)
    const expected = Math.ceil(STORM_S / CACHE_S)
    raw.storm = { connections: STORM_CONNECTIONS, seconds: STORM_S, probes, expected, load: storm }
    rows.push({
      item: '4',
      what: `${STORM_CONNECTIONS} concurrent /readyz for ${STORM_S} s (${round(storm.rps, 0)} req/s, ${JSON.stringify(storm.statusCodes)}): chain probes`,
      value: String(probes),
      goal: `exactly ${expected} (one per ${CACHE_S} s)`,
      met: probes === expected
    }, {
      item: '4',
      what: `/readyz p99 inside the ${STORM_CONNECTIONS}-connection storm (closed loop: p99 ≈ connections ÷ req/s)`,
      value: `${ms(storm.p99)} (p50 ${ms(storm.p50)})`,
      goal: '< 5 ms',
      met: storm.p99 < 5
    })
    // What a real storm looks like: 500 checkers once a second each, at a fixed overall rate.
    const paced = await ctx.load.run({ url: `${edge.url}/readyz`, connections: 10, durationS: ctx.runS, overallRate: STORM_CONNECTIONS })
    raw.paced = paced
    rows.push({
      item: '4',
      what: `cached /readyz p99 at ${STORM_CONNECTIONS} checks/s (10 connections, fixed rate)`,
      value: `${ms(paced.p99)} (p50 ${ms(paced.p50)})`,
      goal: '< 5 ms',
      met: paced.p99 < 5
    })
  } finally {
    await edge.stop()
  }
  return { name: 'readiness', rows, raw, seconds: (performance.now() - started) / 1000 }
}
