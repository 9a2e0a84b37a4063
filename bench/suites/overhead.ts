// Benchmark 1: what edge-api's Fastify setup (plugins, hooks, error handling, request ids,
// load shedding) costs over a bare Fastify answering the same JSON.
import { alternate, med } from '../lib/rounds.js'
import type { SuiteResult } from '../lib/report.js'
import { startBare, startEdge } from '../lib/servers.js'
import { ms, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

const CONNECTIONS = 50

export async function overhead (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const edge = await startEdge(ctx.sim.url)
  const bare = await startBare()
  try {
    const options = (url: string) => ({ url: `${url}/v1/status`, connections: CONNECTIONS, durationS: ctx.runS })
    const m = await alternate(ctx.load, ctx.rounds, ctx.warmupS, [
      { label: 'edge', options: options(edge.url) },
      { label: 'bare', options: options(bare.url) }
    ])
    const rps = { edge: med(m.get('edge'), (r) => r.rps), bare: med(m.get('bare'), (r) => r.rps) }
    const p99 = { edge: med(m.get('edge'), (r) => r.p99), bare: med(m.get('bare'), (r) => r.p99) }
    const shed = med(m.get('edge'), (r) => r.non2xx / r.requests)
    const rpsRatio = rps.edge / rps.bare
    const p99Ratio = p99.edge / p99.bare
    return {
      name: 'overhead',
      seconds: (performance.now() - started) / 1000,
      raw: { server: edge.label, connections: CONNECTIONS, rounds: Object.fromEntries(m), rps, p99, shed },
      rows: [
        {
          item: '1',
          what: `GET /v1/status 200 answers/s, ${CONNECTIONS} connections: edge-api / bare Fastify (edge-api shed ${round(shed * 100, 1)}% as 503)`,
          value: `${round(rps.edge, 0)} / ${round(rps.bare, 0)} = ${ratio(rpsRatio)}`,
          goal: '≥ 0.90×',
          met: rpsRatio >= 0.9
        },
        {
          item: '1',
          what: 'GET /v1/status p99: edge-api / bare Fastify',
          value: `${ms(p99.edge)} / ${ms(p99.bare)} = ${ratio(p99Ratio)}`,
          goal: '≤ 1.2×',
          met: p99Ratio <= 1.2
        }
      ]
    }
  } finally {
    await edge.stop()
    await bare.stop()
  }
}
