// Benchmark 11: what OpenTelemetry tracing costs (issue 20). The same edge-api app (service.ts,
// from dist/) with tracing on, every request sampled, exporting OTLP/HTTP to a collector
// stand-in in this process, and off (no hook, no SDK loaded), side by side; the boot of
// dist/main.js both ways; and a collector that never answers, under load.
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { createServer, type Server as HttpServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PARTICIPANTS } from '../../test/fixtures/chain-simulator/data/participants.js'
import { alternate } from '../lib/rounds.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { cpuMs, startEdgeApp, startMain, type Server } from '../lib/servers.js'
import { median, ms, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

const CONNECTIONS = 10
/** The cost is a few percent: more rounds than the other suites, so the median holds on a noisy machine. */
const ROUNDS_FACTOR = 3
const MIN_WARMUP_S = 1
const BOOTS = 7

/** A collector stand-in: answers every export at once (mode 'ok'), or holds it forever ('hang'). */
async function collector (mode: 'ok' | 'hang'): Promise<{ url: string, exports: () => number, close: () => Promise<void> }> {
  let exports = 0
  const hung: ServerResponse[] = []
  const server: HttpServer = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      exports++
      if (mode === 'hang') hung.push(res)
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    exports: () => exports,
    close: async () => {
      for (const res of hung) res.destroy()
      server.closeAllConnections()
      server.close()
    }
  }
}

const tracingEnv = (url: string): Record<string, string> => ({
  EDGE_API_OTEL_ENABLED: 'true',
  OTEL_EXPORTER_OTLP_ENDPOINT: url,
  OTEL_TRACES_SAMPLER: 'always_on'
})

async function rssMb (pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024
}

export async function tracing (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const sink = await collector('ok')
  const rows: Row[] = []
  const raw: Record<string, unknown> = {}
  try {
    // 1. CPU per request, on / off; shedding off on both sides: a saturated run measures the work.
    const on = await startEdgeApp(ctx.sim.url, true, false, undefined, true, undefined, tracingEnv(sink.url))
    // The setting docs/tracing.md suggests under heavy load: a tenth of the root requests sampled.
    const tenth = await startEdgeApp(ctx.sim.url, true, false, undefined, true, undefined, { ...tracingEnv(sink.url), OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' })
    const off = await startEdgeApp(ctx.sim.url, true, false, undefined, true)
    try {
      const routes: Array<[string, (s: Server) => { url: string, paths?: string[] }]> = [
        ['GET /v1/status (no chain read: 1 span)', (s) => ({ url: `${s.url}/v1/status` })],
        ['GET /v1/participants/{address} (a chain read: 2 spans)', (s) => ({ url: s.url, paths: PARTICIPANTS.map((p) => `/v1/participants/${p.address}`) })]
      ]
      for (const [what, target] of routes) {
        const contender = (label: string, server: Server) => {
          let before = 0
          return {
            label,
            options: { ...target(server), connections: CONNECTIONS, durationS: ctx.runS },
            before: async () => { before = await cpuMs(server.pid) },
            after: async (result: { requests: number }) => (await cpuMs(server.pid) - before) * 1000 / result.requests
          }
        }
        const m = await alternate(ctx.load, ctx.rounds * ROUNDS_FACTOR, Math.max(ctx.warmupS, MIN_WARMUP_S), [contender('on', on), contender('off', off), contender('tenth', tenth)])
        const cpuOn = m.get('on')?.extra ?? []
        const cpuOff = m.get('off')?.extra ?? []
        const cpuTenth = m.get('tenth')?.extra ?? []
        const pairRatios = cpuOn.map((v, i) => v / (cpuOff[i] as number))
        const cpuRatio = median(pairRatios)
        const tenthRatio = median(cpuTenth.map((v, i) => v / (cpuOff[i] as number)))
        const failed = [...m.values()].flatMap((side) => side.runs).reduce((n, r) => n + r.errors + r.non2xx, 0)
        raw[what] = { rounds: Object.fromEntries(m), pairRatios, cpu: { on: median(cpuOn), off: median(cpuOff), tenth: median(cpuTenth) } }
        rows.push({
          item: '12',
          what: `${what}, CPU per request of the server process: tracing on (every request sampled, OTLP/HTTP to a live collector) / off (${CONNECTIONS} connections; median of ${pairRatios.length} back-to-back pairs: ${pairRatios.map((r) => r.toFixed(2)).join(', ')}; ${failed} failed)`,
          value: `${round(median(cpuOn), 1)} µs / ${round(median(cpuOff), 1)} µs (medians); pairs ${ratio(cpuRatio)}`,
          goal: '≤ 1.10×',
          met: cpuRatio <= 1.1
        }, {
          item: '12',
          what: `${what}: tracing on with OTEL_TRACES_SAMPLER=parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG=0.1 / off (same rounds)`,
          value: `${round(median(cpuTenth), 1)} µs / ${round(median(cpuOff), 1)} µs; ${ratio(tenthRatio)}`,
          goal: '—',
          met: null
        })
      }
    } finally {
      await on.stop()
      await tenth.stop()
      await off.stop()
    }

    // 2. Boot, process start → first /healthz 200, alternating.
    const boots: Record<'on' | 'off', number[]> = { on: [], off: [] }
    for (let i = 0; i < BOOTS; i++) {
      for (const side of i % 2 === 0 ? ['off', 'on'] as const : ['on', 'off'] as const) {
        const main = await startMain(ctx.sim.url, side === 'on' ? tracingEnv(sink.url) : {})
        boots[side].push(main.startMs)
        await main.stop()
      }
    }
    raw.bootMs = boots
    rows.push({
      item: '12',
      what: `dist/main.js start → first /healthz 200, tracing on / off (medians of ${BOOTS}, alternating): on imports the SDK and the OTLP/HTTP exporter; off imports neither`,
      value: `${ms(median(boots.on))} / ${ms(median(boots.off))} (+${ms(median(boots.on) - median(boots.off))})`,
      goal: '—',
      met: null
    })

    // 3. A collector that never answers, for a whole phase of load: nothing fails, memory bounded.
    // The same phase with tracing off first: on a loaded machine V8 grows its heap under load
    // whatever tracing does, and only the difference is tracing's.
    const paths = PARTICIPANTS.map((p) => `/v1/participants/${p.address}`)
    const growth = async (env: Record<string, string>) => {
      const edge = await startMain(ctx.sim.url, env)
      try {
        const warm = await ctx.load.run({ url: edge.url, paths, connections: 32, durationS: Math.min(10, ctx.memoryPhaseS) })
        const afterWarm = await rssMb(edge.pid)
        const phase = await ctx.load.run({ url: edge.url, paths, connections: 32, durationS: ctx.memoryPhaseS })
        return { warm, phase, afterWarm, afterPhase: await rssMb(edge.pid) }
      } finally {
        await edge.stop()
      }
    }
    const baseline = await growth({})
    const down = await collector('hang')
    try {
      const { phase, afterWarm, afterPhase, warm } = await growth({ ...tracingEnv(down.url), OTEL_EXPORTER_OTLP_TIMEOUT: '10000' })
      const failed = phase.errors + phase.timeouts + (phase.non2xx - (phase.statusCodes['503'] ?? 0))
      const offGrowth = baseline.afterPhase - baseline.afterWarm
      raw.collectorDown = { warm, phase, afterWarm, afterPhase, exports: down.exports(), tracingOff: baseline }
      rows.push({
        item: '12',
        what: `collector never answers, ${ctx.memoryPhaseS} s of load on /v1/participants/{address} (32 connections, ${round(phase.rps, 0)} req/s, every request sampled): failed requests (errors, timeouts, 5xx other than shedding's 503: ${phase.statusCodes['503'] ?? 0})`,
        value: String(failed),
        goal: '0',
        met: failed === 0
      }, {
        item: '12',
        what: `and RSS after a warm-up → after the phase (the span queue is bounded at 2048, the rest dropped); the same phase with tracing off: ${round(baseline.afterWarm, 1)} → ${round(baseline.afterPhase, 1)} MB`,
        value: `${round(afterWarm, 1)} MB → ${round(afterPhase, 1)} MB (+${round(afterPhase - afterWarm, 1)} vs +${round(offGrowth, 1)} MB off)`,
        goal: 'growth ≤ off\'s + 10 MB',
        met: afterPhase - afterWarm <= offGrowth + 10
      })
    } finally {
      await down.close()
    }
  } finally {
    await sink.close()
  }
  return { name: 'tracing', seconds: (performance.now() - started) / 1000, raw, rows }
}
