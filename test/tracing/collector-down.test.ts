import t from 'tap'
import { Pool } from 'undici'
import { exportsInFlight } from '../../src/tracing/exporter.js'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { OtlpReceiver } from '../fixtures/otlp-receiver.js'
import { sampleValue } from '../../harness/prometheus.js'
import { startTracedService } from '../fixtures/traced-service.js'

// The collector down while load runs (bench 12 runs the same for a minute, with RSS): nothing
// fails, the queue and the exports held by the collector stay bounded, the losses keep being
// counted. Real sockets and a chain read per second request: slow on a busy machine.
t.setTimeout(180_000)

const WINDOW_MS = 4000
/** The window lasts until this many requests were answered too: the machine may be slow. */
const MIN_REQUESTS = 200
const WORKERS = 8
const QUEUE = 100
const BATCH = 20
/** 6: the flush at exit may send the 5 batches of a full queue beside the one in flight. */
const IN_FLIGHT = exportsInFlight({ maxQueueSize: QUEUE, maxExportBatchSize: BATCH, scheduleDelayMs: 20, exportTimeoutMs: 100 })
const PATHS = ['/v1/status', ...PARTICIPANTS.map((p) => `/v1/participants/${p.address}`)]

const cases = [
  { name: 'never answers (OTLP/HTTP)', grpc: false, refuse: false },
  { name: 'never answers (OTLP/gRPC)', grpc: true, refuse: false },
  { name: 'refuses connections (OTLP/HTTP)', grpc: false, refuse: true }
] as const

for (const { name, grpc, refuse } of cases) {
  t.test(`a collector that ${name} for ${WINDOW_MS / 1000} s of load: 0 failed, queue and held exports bounded, drops rising`, async (t) => {
    const sim = await startChainSimulator()
    t.teardown(() => sim.close())
    const receiver = grpc ? await OtlpReceiver.grpc() : await OtlpReceiver.http()
    if (refuse) await receiver.close()
    else {
      receiver.mode = 'hang'
      t.teardown(() => receiver.close())
    }
    const { service, origin } = await startTracedService(t, [sim.url], receiver, {
      OTEL_BSP_MAX_QUEUE_SIZE: String(QUEUE),
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: String(BATCH),
      // The batch processor gives up on an export after 100 ms and starts the next one, while
      // the exporter holds each for 30 s: without a bound of our own, hung exports pile up to 30.
      OTEL_BSP_EXPORT_TIMEOUT: '100',
      OTEL_EXPORTER_OTLP_TIMEOUT: '30000'
    // Load shedding off: on a busy machine it would turn some requests away (untraced 503s).
    }, { loadShedding: { maxEventLoopDelay: 0, maxEventLoopUtilization: 0 } })
    const tracing = service.tracing!
    const dropped = async (): Promise<number> => {
      const text = await service.metrics!.scrape()
      return (sampleValue(text, 'edge_api_trace_spans_dropped_total', { reason: 'queue_full' }) ?? 0) +
        (sampleValue(text, 'edge_api_trace_spans_dropped_total', { reason: 'export_failed' }) ?? 0)
    }
    const pool = new Pool(origin, { connections: WORKERS })
    t.teardown(() => pool.close())

    const heapBefore = process.memoryUsage().heapUsed
    const end = performance.now() + WINDOW_MS
    // Bounded whatever the machine's speed: a minute at most.
    const hardEnd = performance.now() + 60_000
    let answered = 0
    const failures: string[] = []
    const loading = (): boolean => (performance.now() < end || answered + failures.length < MIN_REQUESTS) && performance.now() < hardEnd
    let maxQueued = 0
    let maxHeld = 0
    const drops: number[] = []
    const watch = (async () => {
      let next = performance.now() + 1000
      while (loading()) {
        maxQueued = Math.max(maxQueued, tracing.queued)
        maxHeld = Math.max(maxHeld, receiver.held)
        if (performance.now() >= next) {
          drops.push(await dropped())
          next += 1000
        }
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })()
    await Promise.all(Array.from({ length: WORKERS }, async (_, worker) => {
      for (let i = worker; loading(); i += WORKERS) {
        try {
          const res = await pool.request({ path: PATHS[i % PATHS.length] as string, method: 'GET' })
          await res.body.dump()
          if (res.statusCode === 200) answered++
          else failures.push(String(res.statusCode))
        } catch (err) {
          failures.push((err as Error).message)
        }
      }
    }))
    await watch
    drops.push(await dropped())
    t.comment(`${answered} answered; heap ${Math.round(heapBefore / 2 ** 20)} → ${Math.round(process.memoryUsage().heapUsed / 2 ** 20)} MB (this process, the test's own included); drops each second ${drops.join(', ')}`)

    t.same(failures, [], 'no request failed')
    t.ok(answered >= MIN_REQUESTS, `load ran: ${answered} requests answered`)
    t.ok(maxQueued <= QUEUE, `the queue stayed within its bound (${maxQueued} ≤ ${QUEUE})`)
    if (!refuse) {
      t.ok(maxHeld >= 1, 'the collector held exports')
      t.ok(maxHeld <= IN_FLIGHT, `at most ${IN_FLIGHT} exports held at once (${maxHeld}; the exporter's default would allow 30)`)
    }
    t.ok(drops.length >= 3, `${drops.length} samples of the drops`)
    t.ok(drops.every((d, i) => i === 0 || d >= (drops[i - 1] as number)), 'the drops never went down')
    t.ok((drops.at(-1) as number) > (drops[0] as number), `the drops kept rising: ${drops[0]} → ${drops.at(-1)}`)
    const flushStarted = performance.now()
    const flushed = await tracing.shutdown(300)
    if (!refuse) t.equal(flushed, false, 'the flush at exit could not complete')
    t.ok(performance.now() - flushStarted < 2000, 'and it gave up within its budget')
  })
}
