// Benchmark 13: the per-block answer cache on a realistic chain (docs/heights-and-cache.md).
// The simulator gets a real node's cost (each query holds one of a few slots for some
// milliseconds: a few hundred queries per second) and a block every BLOCK_MS; edge-api as
// deployed (dist/main.js), the cache on (64MiB) against off (0), the same hot routes in turn:
// - closed loop, the same connections on both sides, alternating: goodput (2xx/s) and p99.
//   The cache-off side's p99 is the bound; the cache-on side must stay within it;
// - open loop at one offered rate, blocks stopped (every hot read a hit after the first):
//   the hits' p99 against /v1/status's (no chain read, no cache) on the same replica,
//   alternating.
import { loadavg } from 'node:os'
import { request } from 'undici'
import type { LoadResult, OpenLoopResult } from '../lib/load.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { alternate, med } from '../lib/rounds.js'
import { startMain, type MainProcess } from '../lib/servers.js'
import { median, ms, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

/** A real node: 4 queries at once, 10 ms each, so at most 400 queries/s. */
const CHAIN_COST_MS = 10
const CHAIN_CONCURRENCY = 4
/** Faster than gonka's ~5–6 s blocks: more misses, a harder case for the cache. */
const BLOCK_MS = 2000
const HOT_PATHS = ['/v1/epochs/current/participants', '/v1/participants', '/v1/models', '/v1/pricing', '/v1/epochs/latest'] as const
const CLOSED_CONNECTIONS = 32
const OPEN_CONNECTIONS = 64
const GOODPUT_GOAL = 20
const HIT_P99_GOAL = 1.2

export async function answerCache (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const quick = ctx.runS < 2
  const rounds = quick ? 2 : 5
  const closedS = quick ? 1 : 6
  const openS = quick ? 1 : 4
  const rows: Row[] = []
  const raw: Record<string, unknown> = {
    chain: { costMs: CHAIN_COST_MS, concurrency: CHAIN_CONCURRENCY, blockMs: BLOCK_MS },
    loadAverageAtStart: loadavg().map((v) => round(v, 2))
  }
  await ctx.sim.capacity(CHAIN_COST_MS, CHAIN_CONCURRENCY)
  await ctx.sim.blockEvery(BLOCK_MS)
  let on: MainProcess | undefined
  let off: MainProcess | undefined
  try {
    on = await startMain(ctx.sim.url, { EDGE_API_CACHE_SIZE: '64MiB' })
    off = await startMain(ctx.sim.url, { EDGE_API_CACHE_SIZE: '0' })
    const onUrl = on.url
    const offUrl = off.url

    // Closed loop: the same clients on each side, as fast as each answers.
    process.stderr.write('bench 13: closed loop, cache on / off\n')
    const closed = await alternate(ctx.load, rounds, ctx.warmupS, [
      { label: 'on', options: { url: onUrl, paths: HOT_PATHS, connections: CLOSED_CONNECTIONS, durationS: closedS } },
      { label: 'off', options: { url: offUrl, paths: HOT_PATHS, connections: CLOSED_CONNECTIONS, durationS: closedS } }
    ])
    const goodput = { on: med(closed.get('on'), (r) => r.rps), off: med(closed.get('off'), (r) => r.rps) }
    const p99 = { on: med(closed.get('on'), (r) => r.p99), off: med(closed.get('off'), (r) => r.p99) }
    const non2xx = { on: med(closed.get('on'), share), off: med(closed.get('off'), share) }
    const perRound = (closed.get('on')?.runs ?? []).map((r, i) => r.rps / ((closed.get('off')?.runs[i] as LoadResult).rps))
    const gain = goodput.on / goodput.off
    raw.closed = { connections: CLOSED_CONNECTIONS, durationS: closedS, goodput, p99, non2xx, ratioPerRound: perRound, rounds: Object.fromEntries(closed) }
    rows.push({
      item: '13',
      what: `hot routes in turn, ${CLOSED_CONNECTIONS} connections closed loop, chain ${CHAIN_COST_MS} ms × ${CHAIN_CONCURRENCY} at once (≤ ${1000 / CHAIN_COST_MS * CHAIN_CONCURRENCY} queries/s), a block every ${BLOCK_MS / 1000} s: goodput (2xx/s) cache on / off, median of ${rounds} alternating rounds (per round: ${perRound.map((r) => ratio(r)).join(', ')}; non-2xx ${round(non2xx.on * 100, 1)}% / ${round(non2xx.off * 100, 1)}%)`,
      value: `${round(goodput.on, 0)} / ${round(goodput.off, 1)} = ${ratio(gain)}`,
      goal: `≥ ${GOODPUT_GOAL}× at the same p99 bound`,
      met: gain >= GOODPUT_GOAL && p99.on <= p99.off
    }, {
      item: '13',
      what: 'the same runs, p99 cache on / off (the bound: the cache-off side\'s p99)',
      value: `${ms(p99.on)} / ${ms(p99.off)}`,
      goal: 'on ≤ off',
      met: p99.on <= p99.off
    })

    // Open loop, blocks stopped: after one read per route every hot read is a hit.
    await ctx.sim.blockEvery(0)
    const rate = Math.max(100, Math.floor((quick ? 1000 : goodput.on) / 4))
    process.stderr.write(`bench 13: open loop at ${rate}/s, hits against /v1/status\n`)
    const before = await heights(onUrl)
    const open = { hits: [] as OpenLoopResult[], status: [] as OpenLoopResult[] }
    for (let i = 0; i < rounds; i++) {
      const sides = i % 2 === 0 ? (['hits', 'status'] as const) : (['status', 'hits'] as const)
      for (const side of sides) {
        const paths = side === 'hits' ? HOT_PATHS : ['/v1/status']
        await ctx.load.open({ origin: onUrl, paths, rate, durationS: ctx.warmupS, connections: OPEN_CONNECTIONS })
        open[side].push(await ctx.load.open({ origin: onUrl, paths, rate, durationS: openS, connections: OPEN_CONNECTIONS }))
      }
    }
    const after = await heights(onUrl)
    // Every read a hit: each route answered from the cache at the height it had before the runs.
    const allHits = after.every((a, i) => a.cache === 'hit' && a.height === before[i]?.height)
    const hitP99 = median(open.hits.map((r) => r.p99))
    const statusP99 = median(open.status.map((r) => r.p99))
    const hitP50 = median(open.hits.map((r) => r.p50))
    const statusP50 = median(open.status.map((r) => r.p50))
    const hitRatios = open.hits.map((r, i) => r.p99 / (open.status[i] as OpenLoopResult).p99)
    const lost = [...open.hits, ...open.status].reduce((n, r) => n + r.scheduled - sumOk(r), 0)
    raw.open = { rate, connections: OPEN_CONNECTIONS, durationS: openS, before, after, allHits, hits: open.hits, status: open.status, p99RatioPerRound: hitRatios, lost }
    rows.push({
      item: '13',
      what: `a cache hit's p99 / /v1/status's p99, open loop at ${rate} req/s (a quarter of the cache-on goodput) on the cache-on replica, hot routes in turn, blocks stopped (${allHits ? 'every read a hit' : 'NOT every read a hit'}), median of ${rounds} alternating rounds (per round: ${hitRatios.map((r) => ratio(r)).join(', ')}; non-2xx or unanswered: ${lost})`,
      value: `${ms(hitP99)} / ${ms(statusP99)} = ${ratio(hitP99 / statusP99)}`,
      goal: `≤ ${HIT_P99_GOAL}×`,
      met: allHits && lost === 0 && hitP99 / statusP99 <= HIT_P99_GOAL
    }, {
      item: '13',
      what: 'the same runs, p50 hit / /v1/status',
      value: `${ms(hitP50)} / ${ms(statusP50)} = ${ratio(hitP50 / statusP50)}`,
      goal: 'reported',
      met: null
    })
    raw.loadAverageAtEnd = loadavg().map((v) => round(v, 2))
  } finally {
    await on?.stop()
    await off?.stop()
    await ctx.sim.blockEvery(0)
    await ctx.sim.capacity()
  }
  return { name: 'answer-cache', rows, raw, seconds: (performance.now() - started) / 1000 }
}

function share (r: LoadResult): number {
  return r.non2xx / Math.max(1, r.requests)
}

function sumOk (r: OpenLoopResult): number {
  let n = 0
  for (const [code, count] of Object.entries(r.statusCodes)) if (code.startsWith('2')) n += count
  return n
}

/** Each hot route's X-Block-Height and X-Cache, read once. */
async function heights (origin: string): Promise<Array<{ path: string, height: string | undefined, cache: string | undefined }>> {
  const out = []
  for (const path of HOT_PATHS) {
    const res = await request(origin + path)
    await res.body.dump()
    out.push({ path, height: res.headers['x-block-height'] as string | undefined, cache: res.headers['x-cache'] as string | undefined })
  }
  return out
}
