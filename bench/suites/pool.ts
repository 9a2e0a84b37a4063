// Optional benchmark 7 (`--only=7`): the chain client's undici Pool tuning, side by side.
// Coalescing and load shedding are off, and the run cycles through every account, so each
// client request is one chain request and the pool is what is measured.
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { alternate, med, type Contender } from '../lib/rounds.js'
import { startEdgeApp, type Server } from '../lib/servers.js'
import { ms, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

const CONNECTIONS = 64
// The first one is what ChainClient builds by default (connections = EDGE_API_CHAIN_CONCURRENCY).
const VARIANTS = [
  { label: 'connections 64, pipelining 1 (default)', pool: { connections: 64, pipelining: 1, keepAliveTimeout: 4000 } },
  { label: 'connections 8, pipelining 1', pool: { connections: 8, pipelining: 1, keepAliveTimeout: 4000 } },
  { label: 'connections 8, pipelining 8', pool: { connections: 8, pipelining: 8, keepAliveTimeout: 4000 } }
] as const
const LATENCIES_MS = [0, 5]

export async function pool (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const rows: Row[] = []
  const raw: Record<string, unknown> = { connections: CONNECTIONS }
  const paths = PARTICIPANTS.map((p) => `/v1/participants/${p.address}`)
  for (const latency of LATENCIES_MS) {
    if (latency > 0) await ctx.sim.latency(latency)
    const servers: Server[] = []
    try {
      for (const v of VARIANTS) servers.push(await startEdgeApp(ctx.sim.url, false, false, v.pool))
      const contenders: Contender[] = VARIANTS.map((v, i) => ({
        label: v.label,
        options: { url: (servers[i] as Server).url, paths, connections: CONNECTIONS, durationS: ctx.runS }
      }))
      const m = await alternate(ctx.load, ctx.rounds, ctx.warmupS, contenders)
      const base = med(m.get(VARIANTS[0].label), (r) => r.rps)
      raw[`latency${latency}`] = Object.fromEntries(m)
      for (const v of VARIANTS) {
        const rps = med(m.get(v.label), (r) => r.rps)
        rows.push({
          item: '7',
          what: `pool ${v.label}, chain latency ${latency} ms, ${CONNECTIONS} connections: 200 answers/s (ratio to default), p99`,
          value: `${round(rps, 0)} (${ratio(rps / base)}), p99 ${ms(med(m.get(v.label), (r) => r.p99))}`,
          goal: 'reported',
          met: null
        })
      }
    } finally {
      for (const server of servers) await server.stop()
      await ctx.sim.clear()
    }
  }
  return { name: 'pool', rows, raw, seconds: (performance.now() - started) / 1000 }
}
