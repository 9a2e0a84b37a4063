// Benchmark 1: what edge-api's Fastify setup (plugins, hooks, error handling, request ids,
// load shedding, metrics) costs over a bare Fastify answering the same JSON, at the log levels
// it runs at: warn, and info, where it writes an access line per request. The bare Fastify has
// its own default logger at the same level (issue 21): at warn it writes nothing but makes a
// child logger per request, as edge-api does; at info it writes Fastify's two lines per
// request. Each side's log goes to a file of its own (at warn: /dev/null, nothing is written).
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { alternate, med, type Measured } from '../lib/rounds.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { startBare, startEdge, type Server } from '../lib/servers.js'
import { ms, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

const CONNECTIONS = 50
const LEVELS = ['warn', 'info'] as const
// Four sides alternate (edge and bare at each level): more rounds than other suites, so one
// noisy round of a shared machine moves a median less; about 50 s in all.
const ROUNDS = 5

export async function overhead (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const rounds = ctx.runS < 2 ? ctx.rounds : ROUNDS
  const dir = await mkdtemp(join(tmpdir(), 'edge-api-overhead-'))
  const logs = await Promise.all(['edge.log', 'bare.log'].map((name) => open(join(dir, name), 'w')))
  const [edgeLog, bareLog] = logs.map((file) => file.fd) as [number, number]
  const servers: Server[] = []
  const options = (url: string) => ({ url: `${url}/v1/status`, connections: CONNECTIONS, durationS: ctx.runS })
  try {
    const contenders = []
    for (const level of LEVELS) {
      // Nothing is written below info: /dev/null stands for the file.
      const edge = await startEdge(ctx.sim.url, { level, stdout: level === 'info' ? edgeLog : 'ignore' })
      servers.push(edge)
      const bare = await startBare({ level, stdout: level === 'info' ? bareLog : 'ignore' })
      servers.push(bare)
      contenders.push({ label: `edge ${level}`, options: options(edge.url) }, { label: `bare ${level}`, options: options(bare.url) })
    }
    // One alternation over all four, so the levels share the machine's drift as the sides do.
    const m = await alternate(ctx.load, rounds, ctx.warmupS, contenders)
    const rows: Row[] = []
    const raw: Record<string, unknown> = {
      servers: servers.map((server) => server.label),
      connections: CONNECTIONS,
      rounds: Object.fromEntries(m),
      // What the two sides wrote at info: edge-api's access lines, Fastify's two lines per request.
      logBytes: { edge: (await logs[0]?.stat())?.size, bare: (await logs[1]?.stat())?.size }
    }
    for (const level of LEVELS) {
      const edge = m.get(`edge ${level}`) as Measured
      const bare = m.get(`bare ${level}`) as Measured
      const rps = { edge: med(edge, (r) => r.rps), bare: med(bare, (r) => r.rps) }
      const p99 = { edge: med(edge, (r) => r.p99), bare: med(bare, (r) => r.p99) }
      const shed = med(edge, (r) => r.non2xx / r.requests)
      // Each round's own ratio too: the two sides of a round ran back to back.
      const perRound = edge.runs.map((r, i) => r.rps / (bare.runs[i]?.rps ?? Number.NaN))
      raw[level] = { rps, p99, shed, perRound }
      const rpsRatio = rps.edge / rps.bare
      const p99Ratio = p99.edge / p99.bare
      rows.push({
        item: '1',
        what: `GET /v1/status 200 answers/s at ${level}, ${CONNECTIONS} connections, median of ${rounds} rounds: edge-api / bare Fastify with its default logger at ${level} (edge-api shed ${round(shed * 100, 1)}% as 503; per round ${perRound.map((r) => ratio(r)).join(', ')})`,
        value: `${round(rps.edge, 0)} / ${round(rps.bare, 0)} = ${ratio(rpsRatio)}`,
        goal: '≥ 0.90×',
        met: rpsRatio >= 0.9
      }, {
        item: '1',
        what: `GET /v1/status p99 at ${level}: edge-api / bare Fastify`,
        value: `${ms(p99.edge)} / ${ms(p99.bare)} = ${ratio(p99Ratio)}`,
        goal: '≤ 1.2×',
        met: p99Ratio <= 1.2
      })
    }
    return { name: 'overhead', seconds: (performance.now() - started) / 1000, raw, rows }
  } finally {
    for (const server of servers) await server.stop()
    for (const file of logs) await file.close()
    await rm(dir, { recursive: true, force: true })
  }
}
