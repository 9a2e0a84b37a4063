// Benchmark 10: overload (docs/overload.md). A busy replica must keep serving at its capacity and shed
// only the excess. edge-api as deployed (dist/main.js) and a bare Fastify, both logging at
// info to a file of their own, side by side:
// - saturation: 32 closed-loop connections on each, both at the same time (the same machine
//   noise for both), six consecutive rounds, goodput (2xx/s) round by round; then at once a
//   burst of 1000 identical chain reads on edge-api; /readyz polled throughout;
// - open loop at 0.5×, 1×, 2× and 3× of each server's own capacity (measured first, closed
//   loop with the same generator), on /v1/status and on a chain read: goodput, share shed,
//   p99 of the served requests, and the server's CPU time per served and per refused request.
import { createReadStream } from 'node:fs'
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { request } from 'undici'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import type { LoadResult, OpenLoopResult } from '../lib/load.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { cpuMs, startBare, startEdgeApp, startMain } from '../lib/servers.js'
import { ms, ratio, round } from '../lib/stats.js'
import { PARTICIPANT_PATH, type Context } from './context.js'

const SATURATION_CONNECTIONS = 32
// Capacity is measured with enough concurrent clients that the server batches its reads as it
// does under the open-loop runs (which spread over up to 1000 connections), with the same
// generator: 32 connections measure less than a server can do.
const CAPACITY_CONNECTIONS = 256
const BURST = 1000
const MULTIPLES = [0.5, 1, 2, 3] as const
const PAUSE_MS = 1000

interface Endpoint { readonly name: string, readonly paths: readonly string[] }

export async function overload (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const quick = ctx.runS < 2
  const roundS = quick ? 1 : 4
  const rounds = quick ? 2 : 6
  const openS = quick ? 1 : 4
  const dir = await mkdtemp(join(tmpdir(), 'edge-api-overload-'))
  const edgeLog = await open(join(dir, 'edge.log'), 'w')
  const bareLog = await open(join(dir, 'bare.log'), 'w')
  const edge = await startMain(ctx.sim.url, { EDGE_API_LOG_LEVEL: 'info' }, edgeLog.fd)
  const bare = await startBare({ level: 'info', stdout: bareLog.fd, chainUrl: ctx.sim.url })
  const rows: Row[] = []
  const raw: Record<string, unknown> = { edge: edge.label, bare: bare.label }
  const status: Endpoint = { name: 'GET /v1/status', paths: ['/v1/status'] }
  // Every account of the fixture in turn: each read is a chain request unless an identical
  // one is already in flight.
  const chainRead: Endpoint = { name: 'GET /v1/participants/{address}', paths: PARTICIPANTS.map((p) => `/v1/participants/${p.address}`) }
  const readyz = pollReadyz(edge.url)
  try {
    // Saturation, then the burst right after it.
    const sat: Record<'edge' | 'bare', LoadResult[]> = { edge: [], bare: [] }
    const saturate = (url: string, durationS: number): Promise<LoadResult> => ctx.load.run({ url: url + status.paths[0], connections: SATURATION_CONNECTIONS, durationS })
    progress('saturation')
    await Promise.all([saturate(edge.url, ctx.warmupS), saturate(bare.url, ctx.warmupS)])
    for (let i = 0; i < rounds; i++) {
      const [e, b] = await Promise.all([saturate(edge.url, roundS), saturate(bare.url, roundS)])
      sat.edge.push(e)
      sat.bare.push(b)
    }
    progress('burst')
    await ctx.sim.reset()
    const burst = await ctx.load.run({ url: edge.url + chainRead.paths[1], connections: BURST, amount: BURST })
    const burstChain = await ctx.sim.count(PARTICIPANT_PATH)
    const perRound = sat.edge.map((r, i) => r.rps / (sat.bare[i] as LoadResult).rps)
    const shedPerRound = sat.edge.map((r) => r.non2xx / r.requests)
    raw.saturation = { connections: SATURATION_CONNECTIONS, roundS, edge: sat.edge, bare: sat.bare, ratios: perRound, shed: shedPerRound }
    raw.burst = { ...burst, chainRequests: burstChain }
    rows.push({
      item: '10',
      what: `${status.name} saturation, ${SATURATION_CONNECTIONS} connections closed loop on each server at once, ${rounds} consecutive ${roundS} s rounds: edge-api 2xx/s per round (share shed)`,
      value: sat.edge.map((r, i) => `${round(r.rps, 0)} (${round((shedPerRound[i] as number) * 100, 1)}%)`).join(', '),
      goal: 'reported',
      met: null
    }, {
      item: '10',
      what: 'the same, bare Fastify (logger at info) 2xx/s per round',
      value: sat.bare.map((r) => `${round(r.rps, 0)}`).join(', '),
      goal: 'reported',
      met: null
    }, {
      item: '10',
      what: 'saturation goodput per round: edge-api / bare Fastify (same round)',
      value: perRound.map((r) => ratio(r)).join(', '),
      goal: 'every round ≥ 0.85×',
      met: perRound.every((r) => r >= 0.85)
    }, {
      item: '10',
      what: 'saturation: largest share of a round shed as 503 (closed loop: there is no excess to shed)',
      value: `${round(Math.max(...shedPerRound) * 100, 2)}%`,
      goal: '≈ 0',
      met: Math.max(...shedPerRound) < 0.01
    }, {
      item: '10',
      what: `right after: a burst of ${BURST} identical chain reads (${BURST} connections), answered 200 (chain requests it made)`,
      value: `${burst.ok}/${BURST} (${burstChain})`,
      goal: `${BURST}/${BURST}`,
      met: burst.ok === BURST
    })

    // What a refusal costs against serving: the app from dist/ refusing every /v1 request
    // (its heap limit set to 1 byte) and the same app serving, same load, CPU per answer.
    progress('cost of a refusal')
    const cost: Record<string, number> = {}
    for (const [label, mode] of [['served', true], ['refused', 'all']] as const) {
      const app = await startEdgeApp(ctx.sim.url, true, mode, undefined, true, 'info')
      try {
        // The boot grace (1 s after ready) passes during the warm-up.
        await ctx.load.open({ origin: app.url, paths: status.paths, rate: 0, durationS: 1.5, connections: SATURATION_CONNECTIONS })
        const before = await cpuMs(app.pid)
        const r = await ctx.load.open({ origin: app.url, paths: status.paths, rate: 0, durationS: ctx.runS, connections: SATURATION_CONNECTIONS })
        const answers = Object.values(r.statusCodes).reduce((a, b) => a + b, 0)
        cost[label] = (await cpuMs(app.pid) - before) * 1000 / answers
        cost[`${label}Answers`] = answers
        cost[`${label}Status`] = Number(Object.keys(r.statusCodes)[0])
      } finally {
        await app.stop()
      }
    }
    raw.refusalCost = cost
    rows.push({
      item: '10',
      what: `edge-api CPU per ${status.name} answered ${cost.servedStatus} / per ${cost.refusedStatus} refused by load shedding (${SATURATION_CONNECTIONS} connections closed loop, logging at info)`,
      value: `${round(cost.served as number, 0)} µs / ${round(cost.refused as number, 0)} µs = ${ratio((cost.refused as number) / (cost.served as number))}`,
      goal: 'reported: shedding shortens a queue only where a refusal costs far less than an answer',
      met: null
    })

    // Open loop, on each endpoint, at multiples of each server's own capacity.
    const open: Record<string, unknown> = {}
    for (const endpoint of [status, chainRead]) {
      const capacity: Record<string, number> = {}
      const ladder: Record<string, OpenLoopResult[]> = { edge: [], bare: [] }
      for (const [label, server] of [['edge', edge], ['bare', bare]] as const) {
        progress(`${endpoint.name} capacity, ${label}`)
        await ctx.load.open({ origin: server.url, paths: endpoint.paths, rate: 0, durationS: ctx.warmupS, connections: CAPACITY_CONNECTIONS })
        const closed = await ctx.load.open({ origin: server.url, paths: endpoint.paths, rate: 0, durationS: ctx.runS, connections: CAPACITY_CONNECTIONS })
        capacity[label] = closed.goodput
      }
      for (const k of MULTIPLES) {
        for (const [label, server] of [['edge', edge], ['bare', bare]] as const) {
          progress(`${endpoint.name} open loop ${k}×, ${label}`)
          await ctx.sim.reset()
          ladder[label]?.push(await ctx.load.open({ origin: server.url, paths: endpoint.paths, rate: k * (capacity[label] as number), durationS: openS }))
          // Whatever a server still holds (bare Fastify queues the excess) must not spill into the next run.
          await new Promise((resolve) => setTimeout(resolve, PAUSE_MS))
        }
      }
      open[endpoint.name] = { capacity, ladder }
      rows.push(...openRows(endpoint.name, capacity, ladder))
    }
    raw.open = open
  } finally {
    const ready = await readyz.stop()
    raw.readyz = ready
    rows.push({
      item: '10',
      what: `edge-api /readyz polled every 250 ms throughout (${ready.total} checks): answers other than 200`,
      value: `${ready.total - ready.ok}`,
      goal: '0',
      met: ready.total > 0 && ready.ok === ready.total
    })
    await edge.stop()
    await bare.stop()
    await edgeLog.close()
    await bareLog.close()
  }
  const lines = await logLines(join(dir, 'edge.log'))
  raw.edgeLog = lines
  rows.push({
    item: '10',
    what: `edge-api log at info over the whole benchmark: access lines, "shedding" summary lines (shortest gap between two), other lines (${Object.entries(lines.other).map(([m, n]) => `${m}: ${n}`).join(', ')})`,
    value: `${lines.access}, ${lines.shedding} (${Number.isFinite(lines.sheddingMinGapMs) ? `${lines.sheddingMinGapMs} ms` : 'n/a'}), ${Object.values(lines.other).reduce((a, b) => a + b, 0)}`,
    goal: 'summaries ≥ 1 s apart',
    met: !(lines.sheddingMinGapMs < 1000)
  })
  await rm(dir, { recursive: true, force: true })
  return { name: 'overload', rows, raw, seconds: (performance.now() - started) / 1000 }
}

function progress (step: string): void {
  process.stderr.write(`  overload: ${step}\n`)
}

function openRows (name: string, capacity: Record<string, number>, ladder: Record<string, OpenLoopResult[]>): Row[] {
  const rows: Row[] = []
  const describe = (r: OpenLoopResult, cap: number): string =>
    `${round(r.goodput, 0)}/s = ${ratio(r.goodput / cap)} cap, shed ${round(r.shed * 100, 1)}%, p99 ${ms(r.p99)}` +
    (r.unanswered > 0 ? `, ${r.unanswered} unanswered` : '') + (r.sendLagP99 > 5 ? ` (generator late ${ms(r.sendLagP99)})` : '')
  MULTIPLES.forEach((k, i) => {
    const e = ladder.edge?.[i] as OpenLoopResult
    const b = ladder.bare?.[i] as OpenLoopResult
    rows.push({
      item: '10',
      what: `${name} open loop at ${k}× capacity (offered ${round(e.offered, 0)} / ${round(b.offered, 0)} req/s): edge-api | bare Fastify`,
      value: `${describe(e, capacity.edge as number)} \\| ${describe(b, capacity.bare as number)}`,
      goal: 'reported',
      met: null
    })
  })
  const edge = ladder.edge as OpenLoopResult[]
  const half = edge[0] as OpenLoopResult
  const double = edge[2] as OpenLoopResult
  rows.push({
    item: '10',
    what: `${name} capacity (closed loop, ${CAPACITY_CONNECTIONS} connections): edge-api / bare Fastify`,
    value: `${round(capacity.edge as number, 0)} / ${round(capacity.bare as number, 0)} = ${ratio((capacity.edge as number) / (capacity.bare as number))}`,
    goal: 'reported',
    met: null
  }, {
    item: '10',
    what: `${name} edge-api at 2× capacity: goodput / capacity`,
    value: ratio(double.goodput / (capacity.edge as number)),
    goal: '≥ 0.85×',
    met: double.goodput / (capacity.edge as number) >= 0.85
  }, {
    item: '10',
    what: `${name} edge-api served p99 at 2× / at 0.5×`,
    value: `${ms(double.p99)} / ${ms(half.p99)} = ${ratio(double.p99 / half.p99)}`,
    goal: '≤ 5×',
    met: double.p99 / half.p99 <= 5
  })
  return rows
}

/** Polls /readyz until stopped; counts the answers and the 200s. */
function pollReadyz (origin: string): { stop: () => Promise<{ total: number, ok: number, other: Record<string, number> }> } {
  const state = { running: true }
  let total = 0
  let ok = 0
  const other: Record<string, number> = {}
  const loop = (async () => {
    while (state.running) {
      try {
        const res = await request(`${origin}/readyz`, { headersTimeout: 5000, bodyTimeout: 5000 })
        await res.body.dump()
        total++
        if (res.statusCode === 200) ok++
        else other[res.statusCode] = (other[res.statusCode] ?? 0) + 1
      } catch (err) {
        total++
        const code = (err as { code?: string }).code ?? 'error'
        other[code] = (other[code] ?? 0) + 1
      }
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  })()
  return {
    stop: async () => {
      state.running = false
      await loop
      return { total, ok, other }
    }
  }
}

/** Counts edge-api's log lines by kind, and the shortest time between two "shedding" summaries. */
async function logLines (file: string): Promise<{ access: number, shedding: number, sheddingMinGapMs: number, other: Record<string, number> }> {
  let access = 0
  let shedding = 0
  let last = Number.NaN
  let sheddingMinGapMs = Infinity
  const other: Record<string, number> = {}
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity })
  for await (const text of lines) {
    if (text === '') continue
    const line = JSON.parse(text) as { msg: string, time: string }
    if (line.msg === 'request') access++
    else if (line.msg === 'shedding') {
      shedding++
      const at = Date.parse(line.time)
      sheddingMinGapMs = Math.min(sheddingMinGapMs, at - last)
      last = at
    } else other[line.msg] = (other[line.msg] ?? 0) + 1
  }
  return { access, shedding, sheddingMinGapMs, other }
}
