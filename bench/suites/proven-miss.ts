// Benchmark 21: a proven miss against an unverified miss (issue 55, phase 3), on
// `/v1/epochs/latest` (five store keys: the epoch params, the effective epoch, the PoC event,
// the latest epoch), the answer cache off so that every request is a miss, over the signed
// simulated chain with its blocks stopped. Two ways, chosen by BENCH_PROVEN:
// - `route`: end to end, `node dist/main.js` with EDGE_API_VERIFICATION=answers against the
//   same with `off`, open loop at a fixed rate, alternating: latency p50/p99 from every
//   answer's own time, and each replica's CPU time (/proc) per answer. Every `answers` answer
//   must say `X-Verification: verified`, or the figure is not a proven miss's.
// - `in-process`: until the routes prove their answers (EDGE_API_VERIFICATION=answers only
//   follows the headers in a build without the wiring), the parts measured apart, alternating:
//   the unverified miss end to end (the `off` replica, its node at V), and in this process,
//   through one ChainClient at V, the answer's one unverified chain read against proveAnswer
//   (src/proven/: each key read with `abci_query?prove=true`, both ICS23 proof ops verified
//   against the verified app hash, the values decoded and compared with the replica's answer).
//   A proven miss is then estimated as the miss plus proveAnswer, in sequence.
// - `auto` (the default): `route` when an `answers` replica's answer says it was verified,
//   else `in-process`. Each row says which was measured.
// BENCH_PROVEN_MAIN=<a build's dist/main.js> runs that build's replicas instead of this one's
// (e.g. a branch that proves the routes, measured with this benchmark).
import { request } from 'undici'
import { MAX_VALIDATORS } from '../../harness/chain-simulator/validators.js'
import { okAnswers, type OpenLoopResult } from '../lib/load.js'
import { provingClient, type ProvingClient } from '../lib/proving-client.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { cpuMs, startMain, type MainProcess } from '../lib/servers.js'
import { startSignedSim, startVerifyingMain, untilVerifying, type SignedSim } from '../lib/signed-sim.js'
import { median, ms, percentile, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

const PATH = '/v1/epochs/latest'
/** Misses a second: well under what either side can serve, so latency is a miss's own. */
const RATE = 50
const CONNECTIONS = 8
const ABCI_QUERY = '/cosmos/base/tendermint/v1beta1/abci_query'

type Mode = 'auto' | 'route' | 'in-process'

export async function provenMiss (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const mode = (process.env.BENCH_PROVEN ?? 'auto') as Mode
  if (!['auto', 'route', 'in-process'].includes(mode)) throw new Error(`BENCH_PROVEN must be auto, route or in-process, not ${mode}`)
  const quick = ctx.runS < 2
  const plan = { rounds: quick ? 2 : 6, runS: quick ? 1 : 4, warmupS: ctx.warmupS }
  const main = process.env.BENCH_PROVEN_MAIN
  const sim = await startSignedSim(MAX_VALIDATORS, 1)
  try {
    let answers: MainProcess | undefined
    let marked: string | undefined
    if (mode !== 'in-process') {
      answers = await startVerifyingMain(sim, 'answers', {}, main)
      await untilVerifying(answers.url)
      marked = await verificationHeader(answers.url + PATH)
      if (mode === 'route' && !isVerified(marked)) {
        await answers.stop()
        throw new Error(`BENCH_PROVEN=route: the answers replica's ${PATH} says X-Verification: ${marked ?? '(none)'}, not verified: this build does not prove the route`)
      }
    }
    const rows = answers !== undefined && isVerified(marked)
      ? await routeMode(ctx, sim, answers, { ...plan, main })
      : (await answers?.stop(), await inProcessMode(ctx, sim, { ...plan, main }, marked))
    const build = main === undefined ? [] : [{ item: '21', what: 'the build measured (BENCH_PROVEN_MAIN)', value: main, goal: '', met: null }]
    return { name: 'proven-miss', rows: [...build, ...rows.rows], raw: { mode, main, ...rows.raw }, seconds: (performance.now() - started) / 1000 }
  } finally {
    await sim.stop()
  }
}

interface Plan { readonly rounds: number, readonly runS: number, readonly warmupS: number, readonly main?: string | undefined }
interface Measured { readonly rows: Row[], readonly raw: Record<string, unknown> }
interface Run { readonly p50: number, readonly p99: number, readonly cpuUs: number }

const isVerified = (marked: string | undefined): boolean => marked?.startsWith('verified') === true

async function verificationHeader (url: string): Promise<string | undefined> {
  const res = await request(url)
  await res.body.dump()
  return res.headers['x-verification'] as string | undefined
}

/** Open loop on `server`'s PATH for `runS`, after its own warm-up: p50, p99, the replica's CPU µs per 2xx answer. */
async function missRun (ctx: Context, server: MainProcess, plan: Plan): Promise<Run & { readonly lost: number }> {
  await ctx.load.open({ origin: server.url, paths: [PATH], rate: RATE, durationS: plan.warmupS, connections: CONNECTIONS })
  const before = await cpuMs(server.pid)
  const r: OpenLoopResult = await ctx.load.open({ origin: server.url, paths: [PATH], rate: RATE, durationS: plan.runS, connections: CONNECTIONS })
  return { p50: r.p50, p99: r.p99, cpuUs: (await cpuMs(server.pid) - before) * 1000 / Math.max(1, okAnswers(r)), lost: r.scheduled - okAnswers(r) }
}

/** The wired route end to end: `answers` against `off`, alternating. */
async function routeMode (ctx: Context, sim: SignedSim, answers: MainProcess, plan: Plan): Promise<Measured> {
  const off = await startVerifyingMain(sim, 'off', {}, plan.main)
  try {
    const runs = { answers: [] as Run[], off: [] as Run[] }
    const marks: Array<string | undefined> = []
    let lost = 0
    for (let i = 0; i < plan.rounds; i++) {
      for (const side of i % 2 === 0 ? (['answers', 'off'] as const) : (['off', 'answers'] as const)) {
        const run = await missRun(ctx, side === 'answers' ? answers : off, plan)
        runs[side].push(run)
        lost += run.lost
      }
      marks.push(await verificationHeader(answers.url + PATH))
    }
    const allVerified = marks.every(isVerified)
    const rows = compareRows(`end to end (BENCH_PROVEN=route): dist/main.js EDGE_API_VERIFICATION=answers / off, cache off, open loop at ${RATE}/s, ${plan.rounds} alternating pairs (X-Verification after each: ${allVerified ? 'verified' : marks.join(', ')}; not 2xx or unanswered: ${lost})`, runs.answers, runs.off, allVerified && lost === 0)
    return { rows, raw: { measured: 'route', runs, marks } }
  } finally {
    await answers.stop()
    await off.stop()
  }
}

function compareRows (what: string, proven: readonly Run[], plain: readonly Run[], ok: boolean): Row[] {
  const pairs = (pick: (r: Run) => number): number[] => proven.map((r, i) => pick(r) / pick(plain[i] as Run))
  const med = (runs: readonly Run[], pick: (r: Run) => number): number => median(runs.map(pick))
  const cpu = pairs((r) => r.cpuUs)
  return [{
    item: '21',
    what: `a ${PATH} miss, proven / unverified, ${what}: latency p50, p99`,
    value: `p50 ${ms(med(proven, (r) => r.p50))} / ${ms(med(plain, (r) => r.p50))} (pairs ${ratio(median(pairs((r) => r.p50)))}); p99 ${ms(med(proven, (r) => r.p99))} / ${ms(med(plain, (r) => r.p99))} (pairs ${ratio(median(pairs((r) => r.p99)))})`,
    goal: 'reported',
    met: ok ? null : false
  }, {
    item: '21',
    what: `… CPU per miss, proven / unverified (pairs: ${cpu.map((c) => c.toFixed(2)).join(', ')})`,
    value: `${round(med(proven, (r) => r.cpuUs), 0)} µs / ${round(med(plain, (r) => r.cpuUs), 0)} µs (pairs ${ratio(median(cpu))})`,
    goal: 'reported',
    met: ok ? null : false
  }]
}

/** `call` at RATE a second for `runS`, one at a time: each call's latency, and this process's CPU µs per call. */
async function paced (runS: number, call: () => Promise<void>): Promise<Run> {
  const n = Math.max(1, Math.round(runS * RATE))
  const latencies = new Float64Array(n)
  const start = performance.now()
  const before = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    const wait = start + i * 1000 / RATE - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    const t0 = performance.now()
    await call()
    latencies[i] = performance.now() - t0
  }
  const used = process.cpuUsage(before)
  latencies.sort()
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuUs: (used.user + used.system) / n }
}

/** The parts, alternating round by round: the replica's unverified miss, the answer's chain read in process, proveAnswer in process. */
async function inProcessMode (ctx: Context, sim: SignedSim, plan: Plan, marked: string | undefined): Promise<Measured> {
  // The replica's node is V's (two behind the head): its answer is the one proven at V.
  const off = await startMain(sim.behindUrl, { EDGE_API_CACHE_SIZE: '0' }, 'ignore', plan.main)
  const prover: ProvingClient = await provingClient(sim.urls[0] as string, await sim.height())
  try {
    const answer = await (await request(off.url + PATH)).body.json() as Record<string, any>
    if (String(answer.block_height) !== String(prover.V)) throw new Error(`the replica answered at ${String(answer.block_height)}, not V = ${prover.V}`)
    const check = await prover.prove(answer)
    if (check.kind !== 'verified') throw new Error(`proveAnswer: ${JSON.stringify(check)}`)
    const runs = { miss: [] as Run[], read: [] as Run[], prove: [] as Run[] }
    const parts = {
      miss: async () => missRun(ctx, off, plan),
      read: async () => {
        await paced(plan.warmupS, async () => { await prover.unverifiedRead() })
        return paced(plan.runS, async () => { await prover.unverifiedRead() })
      },
      prove: async () => {
        await paced(plan.warmupS, async () => { await prover.prove(answer) })
        return paced(plan.runS, async () => {
          const outcome = await prover.prove(answer)
          if (outcome.kind !== 'verified') throw new Error(`proveAnswer: ${JSON.stringify(outcome)}`)
        })
      }
    }
    await sim.reset()
    for (let i = 0; i < plan.rounds; i++) {
      const order = ['miss', 'read', 'prove'] as const
      for (const part of i % 2 === 0 ? order : [...order].reverse()) runs[part].push(await parts[part]())
    }
    const proofsRun = plan.rounds * Math.max(1, Math.round(plan.runS * RATE)) + plan.rounds * Math.max(1, Math.round(plan.warmupS * RATE))
    const readsPerProof = (await sim.count(ABCI_QUERY)) / proofsRun
    return { rows: inProcessRows(runs, readsPerProof, marked), raw: { measured: 'in-process', V: prover.V, runs, readsPerProof, marked } }
  } finally {
    await prover.close()
    await off.stop()
  }
}

function inProcessRows (runs: Record<'miss' | 'read' | 'prove', Run[]>, readsPerProof: number, marked: string | undefined): Row[] {
  const med = (part: Run[], pick: (r: Run) => number): number => median(part.map(pick))
  const miss = { p50: med(runs.miss, (r) => r.p50), p99: med(runs.miss, (r) => r.p99), cpu: med(runs.miss, (r) => r.cpuUs) }
  const read = { p50: med(runs.read, (r) => r.p50), p99: med(runs.read, (r) => r.p99), cpu: med(runs.read, (r) => r.cpuUs) }
  const prove = { p50: med(runs.prove, (r) => r.p50), p99: med(runs.prove, (r) => r.p99), cpu: med(runs.prove, (r) => r.cpuUs) }
  const why = `measured in process (BENCH_PROVEN=in-process${marked === undefined ? '; this build\'s answers mode does not prove the route: no X-Verification' : `; X-Verification: ${marked}`})`
  return [{
    item: '21',
    what: `a ${PATH} miss, unverified, end to end: dist/main.js EDGE_API_VERIFICATION=off, cache off, open loop at ${RATE}/s, its node at V (median of ${runs.miss.length} runs): latency p50, p99; CPU per miss (/proc)`,
    value: `p50 ${ms(miss.p50)}, p99 ${ms(miss.p99)}; ${round(miss.cpu, 0)} µs`,
    goal: 'reported',
    met: null
  }, {
    item: '21',
    what: `proving that answer, ${why}: proveAnswer at V through a ChainClient (${round(readsPerProof, 2)} abci_query reads with proofs per answer, both ICS23 ops verified, decoded, compared) / the answer's one unverified chain read through the same client, ${RATE}/s one at a time, ${runs.prove.length} alternating rounds: latency p50, p99; CPU per call (this process)`,
    value: `p50 ${ms(prove.p50)} / ${ms(read.p50)}, p99 ${ms(prove.p99)} / ${ms(read.p99)}; CPU ${round(prove.cpu, 0)} µs / ${round(read.cpu, 0)} µs = ${ratio(prove.cpu / read.cpu)}`,
    goal: 'reported',
    met: null
  }, {
    item: '21',
    what: 'a proven miss estimated as the unverified miss plus proveAnswer in sequence (the wiring may read the proofs beside the answer): p50, CPU per miss, against the unverified miss',
    value: `p50 ${ms(miss.p50 + prove.p50)} (${ratio((miss.p50 + prove.p50) / miss.p50)}); CPU ${round(miss.cpu + prove.cpu, 0)} µs (${ratio((miss.cpu + prove.cpu) / miss.cpu)})`,
    goal: 'reported',
    met: null
  }]
}
