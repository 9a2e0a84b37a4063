// Benchmark 16: fair share under overload (issue 41). Twenty polite clients, each from its own
// loopback address, read /v1/epochs/latest and /v1/participants/{address} four times a second;
// then one heavy client (a process of its own, one address) runs a closed loop of cache-missing
// reads on 256, 1024 and 4096 connections beside them, directly to one replica (dist/main.js,
// shedding at its default target, the chain 5 ms away). This build against another build (the
// round's base: BENCH_BASELINE_MAIN, a dist/main.js; skipped when unset), side by side.
// Through the router the replica tells clients apart only with EDGE_API_TRUSTED_PROXIES.
import { existsSync } from 'node:fs'
import { Agent, request } from 'undici'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { startHeavyClient, type HeavyTotals } from '../../harness/heavy-client.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { startMain } from '../lib/servers.js'
import { round } from '../lib/stats.js'
import type { Context } from './context.js'

const POLITE = 20
const POLITE_HZ = 4

interface PoliteResult { readonly total: number, readonly ok: number, readonly p99: number }

async function politeClients (origin: string, seconds: number): Promise<PoliteResult> {
  const statuses: number[] = []
  const ms: number[] = []
  const until = performance.now() + seconds * 1000
  await Promise.all(Array.from({ length: POLITE }, async (_, i) => {
    const agent = new Agent({ localAddress: `127.0.0.${10 + i}`, connections: 2 })
    await new Promise((resolve) => setTimeout(resolve, (i * 1000) / POLITE / POLITE_HZ))
    for (let n = 0; performance.now() < until; n++) {
      const path = n % 2 === 0 ? '/v1/epochs/latest' : `/v1/participants/${PARTICIPANTS[i % PARTICIPANTS.length]?.address ?? ''}`
      const started = performance.now()
      try {
        const res = await request(`${origin}${path}`, { dispatcher: agent, headersTimeout: 10_000, bodyTimeout: 10_000 })
        await res.body.dump()
        statuses.push(res.statusCode)
      } catch {
        statuses.push(0)
      }
      ms.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 / POLITE_HZ - (performance.now() - started))))
    }
    await agent.destroy()
  }))
  const sorted = ms.sort((a, b) => a - b)
  return { total: statuses.length, ok: statuses.filter((s) => s >= 200 && s < 300).length, p99: sorted[Math.floor(sorted.length * 0.99)] ?? Number.NaN }
}

async function besideHeavy (origin: string, connections: number, seconds: number): Promise<{ polite: PoliteResult, heavy: HeavyTotals }> {
  const heavy = startHeavyClient(origin, '127.0.0.2', connections, seconds + 1)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const polite = await politeClients(origin, seconds - 1)
  return { polite, heavy: await heavy.totals }
}

export async function fairness (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const rows: Row[] = []
  const raw: Record<string, unknown> = {}
  const baseline = process.env.BENCH_BASELINE_MAIN
  const sides: Array<[string, string | undefined]> = [['this build', undefined]]
  if (baseline !== undefined && existsSync(baseline)) sides.push(['base', baseline])
  const seconds = Math.max(3, ctx.runS * 2)
  await ctx.sim.latency(5)
  try {
    for (const connections of ctx.runS < 2 ? [256, 1024] : [256, 1024, 4096]) {
      for (const [side, main] of sides) {
        process.stderr.write(`bench 16: ${side}, heavy ${connections}\n`)
        const server = await startMain(ctx.sim.url, { EDGE_API_SHED_DELAY: '20ms' }, 'ignore', main)
        try {
          process.stderr.write('bench 16: warm\n')
          await politeClients(server.url, 1)
          process.stderr.write('bench 16: alone\n')
          const alone = await politeClients(server.url, seconds - 1)
          process.stderr.write('bench 16: beside\n')
          const { polite, heavy } = await besideHeavy(server.url, connections, seconds)
          raw[`${side} ${connections}`] = { alone, polite, heavy }
          const bound = Math.max(3 * alone.p99, alone.p99 + 30)
          rows.push({
            item: '16',
            what: `${side}, directly: 20 polite clients beside a heavy one of ${connections} connections: polite 2xx, p99 (alone); heavy answers/s by status`,
            value: `${polite.ok}/${polite.total}, ${round(polite.p99, 0)} ms (${round(alone.p99, 0)} ms); ${round(heavy.perSecond, 0)}/s ${JSON.stringify(heavy.byStatus)}`,
            goal: 'polite ≥ 99.9% 2xx, p99 ≤ max(3× alone, alone + 30 ms); heavy refused 429',
            met: polite.ok >= 0.999 * polite.total && polite.p99 <= bound && (heavy.byStatus['429'] ?? 0) > 0
          })
        } finally {
          await server.stop()
        }
      }
    }
  } finally {
    await ctx.sim.clear()
  }
  return { name: 'fairness', rows, raw, seconds: (performance.now() - started) / 1000 }
}
