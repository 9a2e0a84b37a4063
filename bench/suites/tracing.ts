// Benchmark 12: what OpenTelemetry tracing costs (issue 20). edge-api as deployed (node
// dist/main.js) with tracing on, every request sampled, exporting OTLP/HTTP to a collector
// stand-in in this process, and off (no hook, nothing of OpenTelemetry loaded), side by side; the boot of
// dist/main.js both ways; and a collector that never answers, then one that refuses
// connections, under load, with RSS, heap and drops sampled over the phase.
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { createServer, type Server as HttpServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { sampleValue } from '../../harness/prometheus.js'
import type { LoadResult } from '../lib/load.js'
import { freePort } from '../../harness/ports.js'
import { alternate } from '../lib/rounds.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { cpuMs, startMain, type Server } from '../lib/servers.js'
import { median, ms, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

const CONNECTIONS = 10
/** The cost is a few percent: more rounds than the other suites, so the median holds on a noisy machine. */
const ROUNDS_FACTOR = 3
const MIN_WARMUP_S = 1
const BOOTS = 7
/** RSS, heap and drops are sampled every second of a collector-down phase, and summed up per quarter. */
const SERIES_WINDOWS = 4

interface Sample { atS: number, rssMb: number, heapMb: number, dropped: number }
interface Phase { result: LoadResult, samples: Sample[] }

/**
 * Per quarter of a phase: the lowest V8 heap used (what a major GC left: the live data) and the
 * highest RSS. Under load the heap is a sawtooth between GCs, so two single samples compare
 * nothing; the floors say whether what is kept grows.
 */
function windows (phase: Phase): Array<{ heapFloorMb: number, rssMaxMb: number }> {
  const lastS = (phase.samples.at(-1) as Sample).atS
  return Array.from({ length: SERIES_WINDOWS }, (_, w) => {
    const inside = phase.samples.filter((x) => x.atS >= lastS * w / SERIES_WINDOWS && x.atS <= lastS * (w + 1) / SERIES_WINDOWS)
    return { heapFloorMb: Math.min(...inside.map((x) => x.heapMb)), rssMaxMb: Math.max(...inside.map((x) => x.rssMb)) }
  })
}
const describe = (phase: Phase): string => windows(phase).map((w) => `${round(w.heapFloorMb, 0)}/${round(w.rssMaxMb, 0)}`).join(', ')

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
    // 1. CPU per request, on / off, of what is deployed: node dist/main.js, as bench/tracing-cpu.ts
    // runs it (the app from dist/ in a bench child, unbundled and under tsx, measured tracing's
    // hooks alone at 1.19x where dist/main.js measures 1.05x: BENCHMARKS.md, "...where the floor
    // is"). No delay-based shedding on any side: a saturated run measures the work.
    const noShedding = { EDGE_API_SHED_DELAY: '0' }
    const on = await startMain(ctx.sim.url, { ...noShedding, ...tracingEnv(sink.url) })
    // The setting docs/tracing.md suggests under heavy load: a tenth of the root requests sampled.
    const tenth = await startMain(ctx.sim.url, { ...noShedding, ...tracingEnv(sink.url), OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' })
    const off = await startMain(ctx.sim.url, noShedding)
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
      what: `dist/main.js start → first /healthz 200, tracing on / off (medians of ${BOOTS}, alternating): on loads tracing's own exporter; off loads nothing of tracing`,
      value: `${ms(median(boots.on))} / ${ms(median(boots.off))} (+${ms(median(boots.on) - median(boots.off))})`,
      goal: '—',
      met: null
    })

    // 3. The collector down (never answering, then refusing connections) for a whole phase of
    // load: nothing fails, and what the heap keeps does not grow. RSS, heap and the drops are
    // sampled every second; the same phase with tracing off comes first, for comparison: under
    // load V8's heap swings by tens of MB between GCs whatever tracing does.
    const paths = PARTICIPANTS.map((p) => `/v1/participants/${p.address}`)
    const everyMs = 1000
    const series = async (env: Record<string, string>): Promise<Phase> => {
      const metricsPort = await freePort()
      const edge = await startMain(ctx.sim.url, { ...env, EDGE_API_METRICS_PORT: String(metricsPort) })
      try {
        await ctx.load.run({ url: edge.url, paths, connections: 32, durationS: Math.min(10, ctx.memoryPhaseS) })
        const samples: Sample[] = []
        const sample = async (atS: number) => {
          const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
          const dropped = (reason: string) => sampleValue(text, 'edge_api_trace_spans_dropped_total', { reason }) ?? 0
          samples.push({ atS, rssMb: await rssMb(edge.pid), heapMb: (sampleValue(text, 'nodejs_heap_size_used_bytes') ?? 0) / 2 ** 20, dropped: dropped('queue_full') + dropped('export_failed') })
        }
        const started = performance.now()
        await sample(0)
        const running = ctx.load.run({ url: edge.url, paths, connections: 32, durationS: ctx.memoryPhaseS })
        const finished = running.then(() => true)
        while (!await Promise.race([finished, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), everyMs))])) {
          await sample(Math.round((performance.now() - started) / 1000))
        }
        await sample(Math.round((performance.now() - started) / 1000))
        return { result: await running, samples }
      } finally {
        await edge.stop()
      }
    }
    const baseline = await series({})
    raw.collectorDown = { tracingOff: baseline }
    for (const mode of ['hang', 'refused'] as const) {
      const down = await collector(mode === 'hang' ? 'hang' : 'ok')
      if (mode === 'refused') await down.close()
      try {
        const phase = await series({ ...tracingEnv(down.url), OTEL_EXPORTER_OTLP_TIMEOUT: '10000' })
        const { result, samples } = phase
        const failed = result.errors + result.timeouts + (result.non2xx - (result.statusCodes['503'] ?? 0))
        const first = samples[0] as Sample
        const last = samples.at(-1) as Sample
        const quarters = windows(phase)
        const floorGrowth = (quarters.at(-1)?.heapFloorMb ?? 0) - (quarters[0]?.heapFloorMb ?? 0)
        raw.collectorDown = { ...raw.collectorDown as object, [mode]: { ...phase, exports: down.exports() } }
        const what = mode === 'hang' ? 'collector never answers' : 'collector refuses connections'
        rows.push({
          item: '12',
          what: `${what}, ${ctx.memoryPhaseS} s of load on /v1/participants/{address} (32 connections, ${round(result.rps, 0)} req/s, every request sampled): failed requests (errors, timeouts, 5xx other than shedding's 503: ${result.statusCodes['503'] ?? 0})`,
          value: String(failed),
          goal: '0',
          met: failed === 0
        }, {
          item: '12',
          what: `and per quarter of the phase, the lowest V8 heap used / the highest RSS (sampled every second; MB): ${describe(phase)}; tracing off, same phase: ${describe(baseline)}`,
          value: `heap floor ${round(quarters[0]?.heapFloorMb ?? 0, 0)} → ${round(quarters.at(-1)?.heapFloorMb ?? 0, 0)} MB (${floorGrowth >= 0 ? '+' : ''}${round(floorGrowth, 1)}); spans dropped ${first.dropped} → ${last.dropped}`,
          goal: 'heap floor growth ≤ 10 MB, drops rising',
          met: floorGrowth <= 10 && last.dropped > first.dropped
        })
      } finally {
        await down.close()
      }
    }
  } finally {
    await sink.close()
  }
  return { name: 'tracing', seconds: (performance.now() - started) / 1000, raw, rows }
}
