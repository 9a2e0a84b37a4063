// Benchmark 5: how fast the real process (dist/main.js) starts, and how fast it leaves on
// SIGTERM with no balancer in front (announce 0): idle keep-alive connections must not hold
// it, and an in-flight request holds it only until it is answered.
import { Pool, request } from 'undici'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { hasMain, startMain } from '../lib/servers.js'
import { median, ms } from '../lib/stats.js'
import { PARTICIPANT_PATH, type Context } from './context.js'

const ROUNDS = 3
const IDLE_CONNECTIONS = 100
const SLOW_CHAIN_MS = 300

export async function lifecycle (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const rows: Row[] = []
  const raw: Record<string, unknown> = {}
  if (!hasMain()) {
    rows.push({ item: '5', what: 'lifecycle', value: 'not measurable: dist/main.js does not exist (not landed)', goal: '', met: null })
    return { name: 'lifecycle', rows, raw, seconds: 0 }
  }

  // Start → /healthz 200, and SIGTERM with idle keep-alive connections → exit.
  const startMs: number[] = []
  const startCpuMs: number[] = []
  // /v1 sits behind under-pressure, whose first event-loop sample (1 s after registration)
  // includes the boot's own work: a busy boot makes the first /v1 requests shed with 503.
  const firstV1: Array<{ ms: number, shed: number }> = []
  const idleExit: Array<{ ms: number, code: number | null, connected: number }> = []
  for (let i = 0; i < ROUNDS; i++) {
    const main = await startMain(ctx.sim.url)
    startMs.push(main.startMs)
    startCpuMs.push(main.startCpuMs)
    firstV1.push(await untilV1Answers(main.url, main.startMs))
    const pool = new Pool(main.url, { connections: IDLE_CONNECTIONS, pipelining: 1 })
    try {
      // 100 concurrent requests open 100 connections, which then sit idle in the pool.
      await Promise.all(Array.from({ length: IDLE_CONNECTIONS }, async () => {
        const res = await pool.request({ path: '/healthz', method: 'GET' })
        await res.body.dump()
      }))
      const connected = pool.stats.connected
      const sent = performance.now()
      main.child.kill('SIGTERM')
      const exit = await main.exited
      idleExit.push({ ms: exit.at - sent, code: exit.code, connected })
    } finally {
      await pool.destroy()
      await main.stop()
    }
  }
  raw.startMs = startMs
  raw.startCpuMs = startCpuMs
  raw.firstV1 = firstV1
  raw.idleExit = idleExit
  const startMedian = median(startMs)
  const idleMedian = median(idleExit.map((e) => e.ms))
  rows.push({
    item: '5',
    what: `process start → /healthz 200 (median of ${ROUNDS}; ${startMs.map((v) => ms(v)).join(', ')})`,
    value: ms(startMedian),
    goal: '< 500 ms',
    met: startMedian < 500
  }, {
    item: '5',
    what: `CPU time used by then (user + system; ${startCpuMs.map((v) => ms(v)).join(', ')})`,
    value: ms(median(startCpuMs)),
    goal: 'reported (wall time on an idle machine ≈ this)',
    met: null
  }, {
    item: '5',
    what: `process start → first /v1/status 200 (503s shed by under-pressure before it: ${firstV1.map((f) => f.shed).join('/')})`,
    value: `${ms(median(firstV1.map((f) => f.ms)))} (${firstV1.map((f) => ms(f.ms)).join(', ')})`,
    goal: 'reported (≈ /healthz, no 503)',
    met: null
  }, {
    item: '5',
    what: `SIGTERM, announce 0, ${IDLE_CONNECTIONS} idle keep-alive connections (${idleExit.map((e) => e.connected).join('/')} open) → exit (codes ${idleExit.map((e) => e.code).join('/')})`,
    value: `${ms(idleMedian)} (${idleExit.map((e) => ms(e.ms)).join(', ')})`,
    goal: '< 200 ms',
    met: idleMedian < 200 && idleExit.every((e) => e.code === 0)
  })

  // One request in flight, answered at T (the chain takes SLOW_CHAIN_MS): exit by T + 100 ms.
  const inFlight: Array<{ afterAnswerMs: number, status: number, code: number | null }> = []
  await ctx.sim.latency(SLOW_CHAIN_MS, PARTICIPANT_PATH)
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const main = await startMain(ctx.sim.url)
      try {
        // /v1 must answer first (see untilV1Answers), or the slow request is shed at once.
        await untilV1Answers(main.url, 0)
        await ctx.sim.reset()
        const answer = request(`${main.url}/v1/participants/${PARTICIPANTS[0].address}`).then(async (res) => {
          await res.body.dump()
          return { status: res.statusCode, at: performance.now() }
        })
        // SIGTERM once the chain has the request, i.e. while it is surely in flight.
        for (let polls = 0; polls < 1000 && await ctx.sim.count(PARTICIPANT_PATH) === 0; polls++) {
          await new Promise((resolve) => setTimeout(resolve, 2))
        }
        main.child.kill('SIGTERM')
        const [res, exit] = await Promise.all([answer, main.exited])
        inFlight.push({ afterAnswerMs: exit.at - res.at, status: res.status, code: exit.code })
      } finally {
        await main.stop()
      }
    }
  } finally {
    await ctx.sim.clear()
  }
  raw.inFlight = inFlight
  const afterMedian = median(inFlight.map((e) => e.afterAnswerMs))
  const worst = Math.max(...inFlight.map((e) => e.afterAnswerMs))
  rows.push({
    item: '5',
    what: `SIGTERM with one request in flight answered at T (statuses ${inFlight.map((e) => e.status).join('/')}, exit codes ${inFlight.map((e) => e.code).join('/')}) → exit at T +`,
    value: `${ms(afterMedian)} median, ${ms(worst)} worst`,
    goal: '≤ 100 ms',
    met: worst <= 100 && inFlight.every((e) => e.status === 200 && e.code === 0)
  })
  return { name: 'lifecycle', rows, raw, seconds: (performance.now() - started) / 1000 }
}

/** Polls GET /v1/status until 200; returns when (counted from `offsetMs` before now) and how many 503s came first. */
async function untilV1Answers (url: string, offsetMs: number): Promise<{ ms: number, shed: number }> {
  const since = performance.now() - offsetMs
  let shed = 0
  for (let i = 0; i < 2000; i++) {
    const res = await request(`${url}/v1/status`)
    await res.body.dump()
    if (res.statusCode === 200) return { ms: performance.now() - since, shed }
    shed++
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error('/v1/status did not answer 200 within 2000 tries')
}
