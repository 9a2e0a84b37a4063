// Benchmark 2: a chain-backed read through edge-api against the same read sent straight to
// the chain simulator; then one hot key at high concurrency, coalescing on against off.
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { alternate, med } from '../lib/rounds.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { startEdge, startEdgeApp } from '../lib/servers.js'
import { median, ms, ratio, round } from '../lib/stats.js'
import { PARTICIPANT_PATH, type Context } from './context.js'

const SATURATION_CONNECTIONS = 32
// autocannon paces a fixed rate per connection and per second (each connection sends its
// share back to back, then waits for the next second): few connections keep the bursts
// small, so the fixed-rate run measures latency under load, not a queue at each second's start.
const FIXED_RATE_CONNECTIONS = 4
const HOT_KEY_CONNECTIONS = 256

export async function chainRead (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const address = PARTICIPANTS[1].address
  const edge = await startEdge(ctx.sim.url)
  const rows: Row[] = []
  const raw: Record<string, unknown> = { server: edge.label }
  try {
    const edgeUrl = `${edge.url}/v1/participants/${address}`
    const directUrl = `${ctx.sim.url}${PARTICIPANT_PATH}${address}`

    // Saturation: closed loop, as fast as each side goes.
    const sat = await alternate(ctx.load, ctx.rounds, ctx.warmupS, [
      { label: 'edge', options: { url: edgeUrl, connections: SATURATION_CONNECTIONS, durationS: ctx.runS } },
      { label: 'direct', options: { url: directUrl, connections: SATURATION_CONNECTIONS, durationS: ctx.runS } }
    ])
    const satRps = { edge: med(sat.get('edge'), (r) => r.rps), direct: med(sat.get('direct'), (r) => r.rps) }
    const satShed = med(sat.get('edge'), (r) => r.non2xx / r.requests)
    raw.saturation = { connections: SATURATION_CONNECTIONS, rps: satRps, shed: satShed, rounds: Object.fromEntries(sat) }
    rows.push({
      item: '2',
      what: `GET /v1/participants/{address} saturation 200 answers/s, ${SATURATION_CONNECTIONS} connections: edge-api / chain direct (edge-api shed ${round(satShed * 100, 1)}% as 503)`,
      value: `${round(satRps.edge, 0)} / ${round(satRps.direct, 0)} = ${ratio(satRps.edge / satRps.direct)}`,
      goal: 'reported',
      met: null
    })

    // Fixed rate at half of edge-api's saturation, the same rate on both sides.
    const rate = Math.max(1, Math.floor(satRps.edge / 2))
    const fixed = await alternate(ctx.load, ctx.rounds, ctx.warmupS, [
      { label: 'edge', options: { url: edgeUrl, connections: FIXED_RATE_CONNECTIONS, durationS: ctx.runS, overallRate: rate } },
      { label: 'direct', options: { url: directUrl, connections: FIXED_RATE_CONNECTIONS, durationS: ctx.runS, overallRate: rate } }
    ])
    const p50 = { edge: med(fixed.get('edge'), (r) => r.p50), direct: med(fixed.get('direct'), (r) => r.p50) }
    const p99 = { edge: med(fixed.get('edge'), (r) => r.p99), direct: med(fixed.get('direct'), (r) => r.p99) }
    const added = { p50: p50.edge - p50.direct, p99: p99.edge - p99.direct }
    const achieved = med(fixed.get('edge'), (r) => r.rps)
    raw.fixedRate = { rate, achieved, connections: FIXED_RATE_CONNECTIONS, p50, p99, added, rounds: Object.fromEntries(fixed) }
    rows.push({
      item: '2',
      what: `added p50 at ${rate} req/s (50% of saturation; achieved ${round(achieved, 0)}): edge-api − direct`,
      value: `${ms(p50.edge)} − ${ms(p50.direct)} = ${ms(added.p50)}`,
      goal: 'reported',
      met: null
    }, {
      item: '2',
      what: `added p99 at ${rate} req/s: edge-api − direct`,
      value: `${ms(p99.edge)} − ${ms(p99.direct)} = ${ms(added.p99)}`,
      goal: '≤ 2 ms',
      met: added.p99 <= 2
    })
  } finally {
    await edge.stop()
  }

  // One hot key, many concurrent clients: coalescing on against off, same entry point.
  // A fixed number of requests (about runS at the saturation rate), so every chain request
  // counted belongs to a client request counted: a duration would cut requests in flight.
  const amount = Math.max(2000, Math.round(((raw.saturation as { rps: { edge: number } } | undefined)?.rps.edge ?? 2000) * ctx.runS))
  // Load shedding is off on both sides: at saturation under-pressure would answer most of
  // either side with cheap 503s, and the comparison would measure shedding, not coalescing.
  const on = await startEdgeApp(ctx.sim.url, true, false)
  const off = await startEdgeApp(ctx.sim.url, false, false)
  try {
    const path = `/v1/participants/${address}`
    // Per 200 answer: a request shed by under-pressure (503) never reaches the chain.
    const chainPerClient = async (ok: number): Promise<number> => (await ctx.sim.count(PARTICIPANT_PATH)) / ok
    const hot = await alternate(ctx.load, ctx.rounds, ctx.warmupS, [
      {
        label: 'on',
        options: { url: on.url + path, connections: HOT_KEY_CONNECTIONS, amount },
        before: () => ctx.sim.reset(),
        after: (r) => chainPerClient(r.ok)
      },
      {
        label: 'off',
        options: { url: off.url + path, connections: HOT_KEY_CONNECTIONS, amount },
        before: () => ctx.sim.reset(),
        after: (r) => chainPerClient(r.ok)
      }
    ])
    const rps = { on: med(hot.get('on'), (r) => r.rps), off: med(hot.get('off'), (r) => r.rps) }
    const p99 = { on: med(hot.get('on'), (r) => r.p99), off: med(hot.get('off'), (r) => r.p99) }
    const perClient = { on: median(hot.get('on')?.extra ?? []), off: median(hot.get('off')?.extra ?? []) }
    const shed = {
      on: med(hot.get('on'), (r) => r.non2xx / r.requests),
      off: med(hot.get('off'), (r) => r.non2xx / r.requests)
    }
    raw.hotKey = { connections: HOT_KEY_CONNECTIONS, amount, rps, p99, shed, chainRequestsPerClientRequest: perClient, rounds: Object.fromEntries(hot) }
    rows.push({
      item: '2',
      what: `one hot key, ${HOT_KEY_CONNECTIONS} connections, load shedding off, 200 answers/s: coalescing on / off (non-2xx: ${round(shed.on * 100, 1)}% / ${round(shed.off * 100, 1)}%)`,
      value: `${round(rps.on, 0)} / ${round(rps.off, 0)} = ${ratio(rps.on / rps.off)}`,
      goal: 'reported (> 1× expected)',
      met: null
    }, {
      item: '2',
      what: 'one hot key p99: coalescing on / off',
      value: `${ms(p99.on)} / ${ms(p99.off)} = ${ratio(p99.on / p99.off)}`,
      goal: 'reported',
      met: null
    }, {
      item: '2',
      what: 'one hot key, chain requests per 200 answer: coalescing on / off',
      value: `${round(perClient.on, 3)} / ${round(perClient.off, 3)}`,
      // Off: about 1 (a warm-up request still in flight when the counters reset adds a little).
      goal: 'on ≪ 1, off ≈ 1',
      met: perClient.on < 0.5 && Math.abs(perClient.off - 1) < 0.05
    })
  } finally {
    await on.stop()
    await off.stop()
  }
  return { name: 'chain-read', rows, raw, seconds: (performance.now() - started) / 1000 }
}
