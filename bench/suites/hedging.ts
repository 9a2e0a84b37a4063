// Benchmark 13: hedged chain reads (docs/hedged-reads.md). Two chain nodes (simulators in
// their own processes, 5 ms per answer); node 1 adds 2 s to 1 in 20 of its answers to the
// participant reads. edge-api (dist/main.js, as deployed) with hedging on (the default,
// EDGE_API_HEDGE=10%) and off, and the baseline: hedging on, no slow node. Open loop on
// loopback (no coordinated omission) at a fixed rate, sides alternating each round; client
// p50/p99 and chain requests per answer (both nodes together), medians over rounds.
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { freePort } from '../../harness/ports.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { startMain, startSim, type Server } from '../lib/servers.js'
import { median, ms, ratio, round } from '../lib/stats.js'
import { PARTICIPANT_PATH, type Context } from './context.js'

const RATE = 100
const BASE_LATENCY_MS = 5
const SLOW_MS = 2000
const SLOW_EVERY = 20

type Side = 'baseline' | 'on' | 'other' | 'off'
// The floor before the delay's rule took the other nodes' tails (2026-12-01), against today's
// default (10 ms): what the lower floor costs and buys.
const OTHER_FLOOR = '20ms'

interface Run {
  readonly p50: number
  readonly p99: number
  readonly ok: number
  readonly failed: number
  readonly chainPerAnswer: number
  /** Hedges sent per chain read that is not a hedge (edge_api_chain_hedges_total). */
  readonly hedgeShare: number
}

/** The hedges a replica has sent (every result), from its /metrics. */
async function hedgesSent (metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text()
  let sent = 0
  for (const match of text.matchAll(/^edge_api_chain_hedges_total\{[^}]*\} (\d+)$/gm)) sent += Number(match[1])
  return sent
}

export async function hedging (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const durationS = Math.max(3, ctx.runS * 5)
  const [a, b] = [await startSim(), await startSim()]
  const servers: Server[] = []
  const runs = new Map<Side, Run[]>([['baseline', []], ['on', []], ['other', []], ['off', []]])
  try {
    const nodes = `${a.url},${b.url}`
    // Each side its own dist/main.js as deployed (load shedding on); its log off.
    const metricsUrls = new Map<Server, string>()
    const edge = async (hedge: string, env: Record<string, string> = {}): Promise<Server> => {
      const metricsPort = await freePort()
      const server = await startMain(nodes, { EDGE_API_HEDGE: hedge, EDGE_API_LOG_LEVEL: 'fatal', EDGE_API_METRICS_PORT: String(metricsPort), ...env })
      servers.push(server)
      metricsUrls.set(server, `http://127.0.0.1:${metricsPort}/metrics`)
      return server
    }
    const sides: Record<Side, Server> = { baseline: await edge('10%'), on: await edge('10%'), other: await edge('10%', { EDGE_API_HEDGE_MIN_DELAY: OTHER_FLOOR }), off: await edge('off') }
    const paths = PARTICIPANTS.map((p) => `/v1/participants/${p.address}`)
    const nodesLike = async (slow: boolean): Promise<void> => {
      await Promise.all([a.clear(), b.clear()])
      await Promise.all([a.latency(BASE_LATENCY_MS), b.latency(BASE_LATENCY_MS)])
      if (slow) await a.slow(SLOW_MS, SLOW_EVERY, PARTICIPANT_PATH)
    }
    const order: Side[] = ['baseline', 'on', 'other', 'off']
    for (let r = 0; r < ctx.rounds; r++) {
      for (const side of r % 2 === 0 ? order : [...order].reverse()) {
        await nodesLike(side !== 'baseline')
        const origin = sides[side].url
        // A warm-up gives each node's latency window its samples (the hedge delay adapts to them).
        await ctx.load.open({ origin, paths, rate: RATE, durationS: 1, connections: 64, graceMs: SLOW_MS + 1000 })
        await Promise.all([a.reset(), b.reset()])
        const metricsUrl = metricsUrls.get(sides[side]) as string
        const hedgesBefore = await hedgesSent(metricsUrl)
        const result = await ctx.load.open({ origin, paths, rate: RATE, durationS, connections: 64, graceMs: SLOW_MS + 3000 })
        const chain = await a.count(PARTICIPANT_PATH) + await b.count(PARTICIPANT_PATH)
        const hedges = await hedgesSent(metricsUrl) - hedgesBefore
        const ok = Object.entries(result.statusCodes).filter(([code]) => code.startsWith('2')).reduce((n, [, c]) => n + c, 0)
        runs.get(side)?.push({ p50: result.p50, p99: result.p99, ok, failed: result.scheduled - ok, chainPerAnswer: chain / Math.max(1, ok), hedgeShare: hedges / Math.max(1, chain - hedges) })
      }
    }
  } finally {
    for (const server of servers) await server.stop()
    await Promise.all([a.stop(), b.stop()])
  }
  const med = (side: Side, pick: (r: Run) => number): number => median((runs.get(side) ?? []).map(pick))
  const each = (pick: (r: Run) => number): Record<Side, number> =>
    ({ baseline: med('baseline', pick), on: med('on', pick), other: med('other', pick), off: med('off', pick) })
  const p99 = each((r) => r.p99)
  const p50 = each((r) => r.p50)
  const chain = each((r) => r.chainPerAnswer)
  const failed = each((r) => r.failed)
  const share = each((r) => r.hedgeShare)
  const extra = share.on
  const rows: Row[] = [{
    item: '13',
    what: `client p50 at ${RATE} req/s, node 1 slow by ${SLOW_MS} ms on 1 in ${SLOW_EVERY} answers: hedging on / off / no slow node`,
    value: `${ms(p50.on)} / ${ms(p50.off)} / ${ms(p50.baseline)} (floor ${OTHER_FLOOR}: ${ms(p50.other)})`,
    goal: 'reported',
    met: null
  }, {
    item: '13',
    what: `client p99: hedging on / off / no slow node (on ÷ no slow node = ${ratio(p99.on / p99.baseline)}; off ÷ no slow node = ${ratio(p99.off / p99.baseline)}; floor ${OTHER_FLOOR}: ${ms(p99.other)}, ${ratio(p99.other / p99.baseline)})`,
    value: `${ms(p99.on)} / ${ms(p99.off)} / ${ms(p99.baseline)}`,
    goal: 'on ≤ 1.5× no slow node',
    met: p99.on <= 1.5 * p99.baseline
  }, {
    item: '13',
    what: `extra chain requests: hedges sent per chain read, slow node / no slow node (edge_api_chain_hedges_total); chain requests per answer on / off / no slow node: ${round(chain.on, 3)} / ${round(chain.off, 3)} / ${round(chain.baseline, 3)} (off coalesces onto slow reads); not answered 2xx: ${failed.on} / ${failed.off} / ${failed.baseline}`,
    value: `${round(share.on * 100, 1)}% / ${round(share.baseline * 100, 1)}% (floor ${OTHER_FLOOR}: ${round(share.other * 100, 1)}%)`,
    goal: 'extra ≤ 10%',
    met: extra <= 0.1
  }]
  return { name: 'hedging', rows, raw: { rate: RATE, durationS, baseLatencyMs: BASE_LATENCY_MS, slowMs: SLOW_MS, slowEvery: SLOW_EVERY, p50, p99, chain, failed, hedgeShare: share, rounds: Object.fromEntries(runs) }, seconds: (performance.now() - started) / 1000 }
}
