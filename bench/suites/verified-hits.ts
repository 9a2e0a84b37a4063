// Benchmark 22: the hit path with verification on (issue 55): `node dist/main.js` with
// EDGE_API_VERIFICATION=headers against the same with `off`, the answer cache on (64MiB),
// over one signed simulated chain of 100 validators with its blocks stopped, so that after
// one read every `/v1/epochs/latest` is a cache hit on both sides and the headers side's
// cursor, verified up to the head, only repeats its idle poll. What the mode adds to an
// answer is then all that differs: X-Verified-Height on the hit, the verification object of
// `/v1/status`. Open loop at a fixed rate (bench/lib/open-loop.ts), the sides alternating
// round by round, each after its own warm-up: p50 and p99 from every answer's own time, and
// the replica's CPU time (/proc) per answer; each pair's headers / off ratio, median of pairs.
import { request } from 'undici'
import { MAX_VALIDATORS } from '../../harness/chain-simulator/validators.js'
import { okAnswers, type OpenLoopResult } from '../lib/load.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { cpuMs, type MainProcess } from '../lib/servers.js'
import { startSignedSim, startVerifyingMain, untilVerifying } from '../lib/signed-sim.js'
import { median, ms, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

const RATE = 500
const CONNECTIONS = 64
const NODES = 3
const PATHS = ['/v1/epochs/latest', '/v1/status'] as const

interface Side { readonly runs: OpenLoopResult[], readonly cpuUs: number[] }

export async function verifiedHits (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const quick = ctx.runS < 2
  const rounds = quick ? 2 : 6
  const runS = quick ? 1 : 4
  const sim = await startSignedSim(MAX_VALIDATORS, NODES)
  let headers: MainProcess | undefined
  let off: MainProcess | undefined
  const rows: Row[] = []
  const raw: Record<string, unknown> = { rate: RATE, connections: CONNECTIONS, runS, rounds }
  try {
    headers = await startVerifyingMain(sim, 'headers', { EDGE_API_CACHE_SIZE: '64MiB' })
    off = await startVerifyingMain(sim, 'off', { EDGE_API_CACHE_SIZE: '64MiB' })
    await untilVerifying(headers.url)
    const sides = { headers, off }
    for (const path of PATHS) {
      process.stderr.write(`bench 22: ${path}, headers / off\n`)
      const measured = { headers: { runs: [], cpuUs: [] } as Side, off: { runs: [], cpuUs: [] } as Side }
      for (let i = 0; i < rounds; i++) {
        for (const side of i % 2 === 0 ? (['headers', 'off'] as const) : (['off', 'headers'] as const)) {
          const server = sides[side]
          await ctx.load.open({ origin: server.url, paths: [path], rate: RATE, durationS: ctx.warmupS, connections: CONNECTIONS })
          const before = await cpuMs(server.pid)
          const result = await ctx.load.open({ origin: server.url, paths: [path], rate: RATE, durationS: runS, connections: CONNECTIONS })
          measured[side].cpuUs.push((await cpuMs(server.pid) - before) * 1000 / Math.max(1, okAnswers(result)))
          measured[side].runs.push(result)
        }
      }
      const answers = { headers: await headersOf(headers.url + path), off: await headersOf(off.url + path) }
      raw[path] = { ...measured, answers }
      rows.push(...hitRows(path, measured, answers))
    }
  } finally {
    await headers?.stop()
    await off?.stop()
    await sim.stop()
  }
  return { name: 'verified-hits', rows, raw, seconds: (performance.now() - started) / 1000 }
}

/** One answer's X-Cache and X-Verified-Height, read after the runs. */
async function headersOf (url: string): Promise<{ cache: string | undefined, verifiedHeight: string | undefined }> {
  const res = await request(url)
  await res.body.dump()
  return { cache: res.headers['x-cache'] as string | undefined, verifiedHeight: res.headers['x-verified-height'] as string | undefined }
}

type Answers = Record<'headers' | 'off', { cache: string | undefined, verifiedHeight: string | undefined }>

function hitRows (path: string, m: Record<'headers' | 'off', Side>, answers: Answers): Row[] {
  const pairs = (pick: (r: OpenLoopResult) => number): number[] => m.headers.runs.map((r, i) => pick(r) / pick(m.off.runs[i] as OpenLoopResult))
  const p50 = pairs((r) => r.p50)
  const p99 = pairs((r) => r.p99)
  const cpu = m.headers.cpuUs.map((c, i) => c / (m.off.cpuUs[i] as number))
  const lost = [...m.headers.runs, ...m.off.runs].reduce((n, r) => n + r.scheduled - okAnswers(r), 0)
  const med = (side: Side, pick: (r: OpenLoopResult) => number): number => median(side.runs.map(pick))
  // Within noise: the pairs fall on both sides of 1 (not every pair costlier with verification).
  const straddles = (values: number[]): boolean => Math.min(...values) <= 1 && Math.max(...values) >= 1
  const list = (values: number[]): string => values.map((v) => v.toFixed(2)).join(', ')
  // On a loaded machine the generator itself is late at p99 as often as the replica: its own lag says how much of a p99 is the machine's.
  const lag = `${ms(med(m.headers, (r) => r.sendLagP99))} / ${ms(med(m.off, (r) => r.sendLagP99))}`
  const kind = path === '/v1/status' ? '/v1/status (no chain read, no cache)' : `${path} cache hits (X-Cache ${answers.headers.cache ?? 'none'} / ${answers.off.cache ?? 'none'})`
  return [{
    item: '22',
    what: `${kind}, open loop at ${RATE} req/s, blocks stopped, 100 validators: p50 and p99, EDGE_API_VERIFICATION=headers / off, ${m.headers.runs.length} alternating pairs (p99 pairs: ${list(p99)}; X-Verified-Height ${answers.headers.verifiedHeight ?? 'none'} / ${answers.off.verifiedHeight ?? 'none'}; not 2xx or unanswered: ${lost}; the generator's own send lag p99 ${lag})`,
    value: `p50 ${ms(med(m.headers, (r) => r.p50))} / ${ms(med(m.off, (r) => r.p50))} (pairs ${ratio(median(p50))}); p99 ${ms(med(m.headers, (r) => r.p99))} / ${ms(med(m.off, (r) => r.p99))} (pairs ${ratio(median(p99))})`,
    goal: 'within noise (pairs on both sides of 1×)',
    met: lost === 0 && straddles(p99)
  }, {
    item: '22',
    what: `… the replica's CPU time (/proc) per answer, headers / off (pairs: ${list(cpu)})`,
    value: `${round(median(m.headers.cpuUs), 0)} µs / ${round(median(m.off.cpuUs), 0)} µs (pairs ${ratio(median(cpu))})`,
    goal: 'within noise (pairs on both sides of 1×)',
    met: straddles(cpu)
  }]
}
