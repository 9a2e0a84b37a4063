// Benchmark 15: the pool as one service (issue 34, docs/heights-and-cache.md). 1, 3 and 6
// replicas (dist/main.js, the answer cache at its default) behind a real HAProxy rendered from
// compose/router/haproxy.cfg.template (round-robin, as deployed), one chain node with a real
// node's cost and a block every BLOCK_MS, clients polling /v1/epochs/latest (the hot key) at a
// fixed offered rate (open loop, bench/lib/open-loop.ts):
// - without the shared tier (EDGE_API_REDIS_URL unset) against with it (a redis-server,
//   harness/redis-server.ts, as the tests start it), the two sides alternating round by round,
//   medians over the rounds: the chain's epoch_info requests per block (the key's chain cost:
//   one per block is the floor), the head polls per block, and the clients' p99;
// - the hot path with blocks moving (as on a live chain: each block brings hints, the looks
//   they start and one miss per key, and every read in between is a hit): each side's
//   3-replica router at HIT_RATE, the two runs at the same time (two generators), so both see
//   the same machine: p99 with the tier against without it (issue 34: within 1.2×), and the
//   replicas' CPU per answer.
// Whether the build has the tier at all is read from the replica's metrics
// (edge_api_shared_*) and the store's key count: a build without it ignores the variable,
// and the rows say so.
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'
import { Load, notOk, okAnswers, type OpenLoopResult } from '../lib/load.js'
import { freePort } from '../../harness/ports.js'
import { RedisServer } from '../../harness/redis-server.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { cpuMs, startMain, type MainProcess } from '../lib/servers.js'
import { median, ms, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'
import { routerWaits, startRouter, type RouterProcess } from './router.js'

const REPLICAS = [1, 3, 6] as const
const BLOCK_MS = 1000
/** A real node: 4 queries at once, 10 ms each (as benchmark 14). */
const CHAIN_COST_MS = 10
const CHAIN_CONCURRENCY = 4
/** Offered to the pool as a whole, whatever its size: the key's chain cost per block is what changes. */
const POOL_RATE = 300
const CONNECTIONS = 32
const HOT_KEY = ['/v1/epochs/latest']
const EPOCH_INFO = '/productscience/inference/inference/epoch_info'
const HOT_PATHS = ['/v1/epochs/current/participants', '/v1/participants', '/v1/models', '/v1/pricing', '/v1/epochs/latest']
const HIT_RATE = 250
const CHAIN_GOAL = 1.2
const HIT_P99_GOAL = 1.2
const SETTLE_MS = 3000
/** The replicas per side the hit path runs through. */
const HIT_POOL = 3

type Side = 'local' | 'shared'
const SIDES: readonly Side[] = ['local', 'shared']

interface PoolRun {
  /** 503s in the run: answered by a replica (its load shedding), or by the router's queue. */
  readonly refused: { readonly replica: number, readonly routerQueue: number }
  readonly epochInfoPerBlock: number
  readonly headPollsPerBlock: number
  readonly blocks: number
  readonly result: OpenLoopResult
}

export async function sharedTier (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const quick = ctx.runS < 2
  const rounds = quick ? 2 : ctx.rounds
  const runS = quick ? 3 : 8
  const hitS = quick ? 1 : 6
  const hitRounds = quick ? 3 : 9
  const rows: Row[] = []
  const raw: Record<string, unknown> = {
    chain: { costMs: CHAIN_COST_MS, concurrency: CHAIN_CONCURRENCY, blockMs: BLOCK_MS },
    poolRate: POOL_RATE,
    loadAverageAtStart: loadavg().map((v) => round(v, 2))
  }
  const dir = await mkdtemp(join(tmpdir(), 'edge-api-shared-tier-'))
  const store = await RedisServer.start()
  const replicas: Record<Side, MainProcess[]> = { local: [], shared: [] }
  const metricsPorts: Record<Side, number[]> = { local: [], shared: [] }
  const routers = new Map<string, RouterProcess>()
  // A second generator for the hit path's simultaneous runs.
  const second = await Load.start()
  try {
    await ctx.sim.capacity(CHAIN_COST_MS, CHAIN_CONCURRENCY)
    const max = Math.max(...REPLICAS)
    for (const side of SIDES) {
      for (let i = 0; i < max; i++) {
        const metricsPort = await freePort()
        metricsPorts[side].push(metricsPort)
        replicas[side].push(await startMain(ctx.sim.url, {
          EDGE_API_CACHE_SIZE: '64MiB',
          EDGE_API_METRICS_PORT: String(metricsPort),
          ...(side === 'shared' ? { EDGE_API_REDIS_URL: store.url } : {})
        }))
      }
      for (const n of REPLICAS) {
        const servers = replicas[side].slice(0, n).map((r) => r.url.replace('http://', '')).join(' ')
        routers.set(`${side} ${n}`, await startRouter(dir, `${side}-${n}`, servers, {}))
      }
    }

    // 1. The pool: each size, both sides alternating, a block every BLOCK_MS. First every router
    // sees every replica up (HAProxy's rise 2 × inter 1 s) and every replica has answered: the
    // first run must not measure twelve processes starting.
    await ctx.sim.blockEvery(BLOCK_MS)
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
    for (const router of routers.values()) await ctx.load.open({ origin: router.url, paths: HOT_KEY, rate: POOL_RATE, durationS: 1, connections: CONNECTIONS })
    const runs = new Map<string, PoolRun[]>([...routers.keys()].map((k) => [k, []]))
    for (let r = 0; r < rounds; r++) {
      for (const [i, n] of REPLICAS.entries()) {
        const order = (r + i) % 2 === 0 ? SIDES : [...SIDES].reverse()
        for (const side of order) {
          progress(`round ${r + 1}, ${n} replica(s), ${side === 'shared' ? 'with' : 'without'} the shared tier`)
          const router = routers.get(`${side} ${n}`) as RouterProcess
          const origin = router.url
          await ctx.load.open({ origin, paths: HOT_KEY, rate: POOL_RATE, durationS: ctx.warmupS, connections: CONNECTIONS })
          await router.newLog()
          const before = { epochInfo: await ctx.sim.count(EPOCH_INFO), polls: await ctx.sim.count(LATEST_BLOCK_PATH), height: await ctx.sim.height() }
          const result = await ctx.load.open({ origin, paths: HOT_KEY, rate: POOL_RATE, durationS: runS, connections: CONNECTIONS })
          const after = { epochInfo: await ctx.sim.count(EPOCH_INFO), polls: await ctx.sim.count(LATEST_BLOCK_PATH), height: await ctx.sim.height() }
          const blocks = Math.max(1, after.height - before.height)
          // Who answered the 503s, from the router's own log (its queue, or a replica shedding).
          await new Promise((resolve) => setTimeout(resolve, 200))
          const waits = routerWaits(await router.newLog())
          runs.get(`${side} ${n}`)?.push({
            refused: { replica: waits.replicaShed, routerQueue: waits.queueTimeouts + waits.queueFull },
            epochInfoPerBlock: (after.epochInfo - before.epochInfo) / blocks,
            headPollsPerBlock: (after.polls - before.polls) / blocks,
            blocks,
            result
          })
        }
      }
    }
    const tier = await tierSeen(metricsPorts.shared, store)
    raw.tier = tier
    raw.pool = Object.fromEntries(runs)
    const med = (side: Side, n: number, pick: (run: PoolRun) => number): number => median((runs.get(`${side} ${n}`) ?? []).map(pick))
    const tierNote = tier.active ? '' : ' — the shared tier is not in this build (EDGE_API_REDIS_URL ignored: no edge_api_shared_* metric, 0 keys in the store): both sides are the local pool'
    for (const n of REPLICAS) {
      const chain = { local: med('local', n, (x) => x.epochInfoPerBlock), shared: med('shared', n, (x) => x.epochInfoPerBlock) }
      const polls = { local: med('local', n, (x) => x.headPollsPerBlock), shared: med('shared', n, (x) => x.headPollsPerBlock) }
      const p99 = { local: med('local', n, (x) => x.result.p99), shared: med('shared', n, (x) => x.result.p99) }
      const failed = { local: med('local', n, (x) => notOk(x.result)), shared: med('shared', n, (x) => notOk(x.result)) }
      const refused = (side: Side): string => {
        const sum = (pick: (x: PoolRun) => number): number => (runs.get(`${side} ${n}`) ?? []).reduce((total, x) => total + pick(x), 0)
        return `503: ${sum((x) => x.refused.replica)} by replicas, ${sum((x) => x.refused.routerQueue)} by the router`
      }
      rows.push({
        item: '15',
        what: `${n} replica(s) behind HAProxy round-robin, /v1/epochs/latest open loop at ${POOL_RATE} req/s, a block every ${BLOCK_MS / 1000} s, chain ${CHAIN_COST_MS} ms × ${CHAIN_CONCURRENCY}: epoch_info chain requests per block without \\| with the shared tier (head polls per block in brackets), median of ${rounds} alternating rounds of ${runS} s${tierNote}`,
        value: `${round(chain.local, 2)} (${round(polls.local, 1)}) \\| ${round(chain.shared, 2)} (${round(polls.shared, 1)})`,
        goal: n === 1 ? 'reported (1 replica: the floor)' : `with ≤ ${CHAIN_GOAL}`,
        met: n === 1 ? null : tier.active ? chain.shared <= CHAIN_GOAL : null
      }, {
        item: '15',
        what: 'the same runs, the clients\' p99 (from when each request was due) without \\| with the shared tier; not 2xx or unanswered (median), and who answered the 503s (all rounds, from the router\'s log)',
        value: `${ms(p99.local)} \\| ${ms(p99.shared)}; ${round(failed.local * 100, 2)}% \\| ${round(failed.shared * 100, 2)}%; ${refused('local')} \\| ${refused('shared')}`,
        goal: 'reported',
        met: null
      })
    }

    // 2. The hot path, blocks still moving: each side's HIT_POOL replicas through its router (a
    // single process's own luck, its JIT and its neighbours' stalls, averaged over several),
    // both sides at once.
    const pool = (side: Side): { url: string, pids: number[] } => ({
      url: (routers.get(`${side} ${HIT_POOL}`) as RouterProcess).url,
      pids: replicas[side].slice(0, HIT_POOL).map((r) => r.pid)
    })
    const [local, shared] = [pool('local'), pool('shared')]
    const cpuOf = async (pids: number[]): Promise<number> => (await Promise.all(pids.map(cpuMs))).reduce((a, b) => a + b, 0)
    const hits: Array<{ local: OpenLoopResult, shared: OpenLoopResult }> = []
    const cpuPerHit: Record<Side, number[]> = { local: [], shared: [] }
    for (let r = 0; r < hitRounds; r++) {
      progress(`hit path, round ${r + 1}: ${HIT_RATE} req/s on each side at once`)
      // Which generator serves which side alternates: a generator's own stalls land on both.
      const [a, b] = r % 2 === 0 ? [ctx.load, second] : [second, ctx.load]
      const options = { paths: HOT_PATHS, rate: HIT_RATE, connections: CONNECTIONS }
      // The warm-up also puts every hot answer in every replica's cache (round-robin).
      await Promise.all([a.open({ ...options, origin: local.url, durationS: ctx.warmupS }), b.open({ ...options, origin: shared.url, durationS: ctx.warmupS })])
      const cpuBefore = { local: await cpuOf(local.pids), shared: await cpuOf(shared.pids) }
      const [l, s] = await Promise.all([a.open({ ...options, origin: local.url, durationS: hitS }), b.open({ ...options, origin: shared.url, durationS: hitS })])
      // The replicas' CPU time per 2xx answer, µs: what an answer costs them, whatever the machine's load.
      cpuPerHit.local.push((await cpuOf(local.pids) - cpuBefore.local) * 1000 / Math.max(1, okAnswers(l)))
      cpuPerHit.shared.push((await cpuOf(shared.pids) - cpuBefore.shared) * 1000 / Math.max(1, okAnswers(s)))
      hits.push({ local: l, shared: s })
    }
    const hitRatios = hits.map((h) => h.shared.p99 / h.local.p99)
    const hitRatio = median(hitRatios)
    const hitP99 = { local: median(hits.map((h) => h.local.p99)), shared: median(hits.map((h) => h.shared.p99)) }
    const hitCache = [...await cacheResults(local.url), ...await cacheResults(shared.url)]
    raw.hits = { rate: HIT_RATE, durationS: hitS, runs: hits, ratios: hitRatios, afterRuns: hitCache, cpuPerHitUs: cpuPerHit }
    rows.push({
      item: '15',
      what: `the hot path, a block every ${BLOCK_MS / 1000} s (each block: hints, looks and one miss per key; the reads between them hits; X-Cache of one read per route after the runs: ${hitCache.join(', ')}): hot routes open loop at ${HIT_RATE} req/s through the ${HIT_POOL}-replica router of each side, both at once (two generators, swapped each round); p99 with / without, median of ${hits.length} rounds' ratios (per round: ${hitRatios.map((x) => ratio(x)).join(', ')})${tierNote}`,
      value: `${ms(hitP99.shared)} / ${ms(hitP99.local)}: ${ratio(hitRatio)}`,
      goal: `≤ ${HIT_P99_GOAL}×`,
      met: hitRatio <= HIT_P99_GOAL
    })
    const hitP50 = { local: median(hits.map((h) => h.local.p50)), shared: median(hits.map((h) => h.shared.p50)) }
    rows.push({
      item: '15',
      what: 'the same runs, p50 with / without the shared tier',
      value: `${ms(hitP50.shared)} / ${ms(hitP50.local)} = ${ratio(hitP50.shared / hitP50.local)}`,
      goal: 'reported',
      met: null
    })
    const cpu = { local: median(cpuPerHit.local), shared: median(cpuPerHit.shared) }
    rows.push({
      item: '15',
      what: 'the same runs, the replicas\' CPU time (user + system, /proc) per answer with / without the shared tier (robust to the machine\'s load, where a p99 of two processes is not)',
      value: `${round(cpu.shared, 0)} µs / ${round(cpu.local, 0)} µs = ${ratio(cpu.shared / cpu.local)}`,
      goal: 'reported (≈ 1×)',
      met: null
    })
    raw.loadAverageAtEnd = loadavg().map((v) => round(v, 2))
  } finally {
    await ctx.sim.blockEvery(0)
    await ctx.sim.capacity()
    for (const router of routers.values()) await router.stop()
    for (const side of SIDES) for (const r of replicas[side]) await r.stop()
    await second.stop()
    await store.stop()
    await rm(dir, { recursive: true, force: true })
  }
  return { name: 'shared-tier', rows, raw, seconds: (performance.now() - started) / 1000 }
}

/** Each hot route's X-Cache, read once. */
async function cacheResults (origin: string): Promise<string[]> {
  const out: string[] = []
  for (const path of HOT_PATHS) {
    const res = await request(origin + path)
    await res.body.dump()
    out.push(String(res.headers['x-cache']))
  }
  return out
}

/** Whether the replicas given EDGE_API_REDIS_URL used it: an edge_api_shared_* metric, or keys in the store. */
async function tierSeen (metricsPorts: readonly number[], store: RedisServer): Promise<{ active: boolean, metrics: boolean, keys: number }> {
  let metrics = false
  for (const port of metricsPorts) {
    const res = await request(`http://127.0.0.1:${port}/metrics`)
    if ((await res.body.text()).includes('edge_api_shared_')) metrics = true
  }
  const keys = await (await store.admin()).dbSize()
  return { active: metrics || keys > 0, metrics, keys }
}

function progress (step: string): void {
  process.stderr.write(`  shared-tier: ${step}\n`)
}
