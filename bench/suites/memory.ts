// Benchmark 6: resident memory under sustained load on a chain-backed route, and whether it
// keeps growing once warm (a leak would: coalescing maps, in-flight sets, sockets).
import { readFile } from 'node:fs/promises'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import type { LoadResult } from '../lib/load.js'
import type { SuiteResult } from '../lib/report.js'
import { startEdge } from '../lib/servers.js'
import { round } from '../lib/stats.js'
import type { Context } from './context.js'

const CONNECTIONS = 32
const SAMPLE_EVERY_MS = 5000

async function rssMb (pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1])
  return kb / 1024
}

export async function memory (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const edge = await startEdge(ctx.sim.url)
  const samples: Array<{ s: number, mb: number }> = []
  const timer = setInterval(() => {
    rssMb(edge.pid).then((mb) => samples.push({ s: round((performance.now() - started) / 1000, 1), mb: round(mb, 1) }), () => {})
  }, SAMPLE_EVERY_MS)
  try {
    const idle = await rssMb(edge.pid)
    // Every account in turn, so the route is not only one coalesced key.
    const paths = PARTICIPANTS.map((p) => `/v1/participants/${p.address}`)
    const phase = (): Promise<LoadResult> => ctx.load.run({ url: edge.url, paths, connections: CONNECTIONS, durationS: ctx.memoryPhaseS })
    const first = await phase()
    const afterFirst = await rssMb(edge.pid)
    const second = await phase()
    const afterSecond = await rssMb(edge.pid)
    const growth = afterSecond - afterFirst
    return {
      name: 'memory',
      seconds: (performance.now() - started) / 1000,
      raw: { server: edge.label, idleMb: idle, afterFirst, afterSecond, growth, samples, first, second },
      rows: [{
        item: '6',
        what: `RSS after ${ctx.memoryPhaseS} s of load on /v1/participants/{address} (${CONNECTIONS} connections, ${round(first.rps, 0)} req/s; idle ${round(idle, 1)} MB)`,
        value: `${round(afterFirst, 1)} MB`,
        goal: '< 150 MB',
        met: afterFirst < 150
      }, {
        item: '6',
        what: `RSS growth over a second ${ctx.memoryPhaseS} s (${round(second.rps, 0)} req/s)`,
        value: `${round(growth, 1)} MB (${round(afterFirst, 1)} → ${round(afterSecond, 1)})`,
        goal: 'no growth (≤ 5 MB, i.e. noise)',
        met: growth <= 5
      }]
    }
  } finally {
    clearInterval(timer)
    await edge.stop()
  }
}
