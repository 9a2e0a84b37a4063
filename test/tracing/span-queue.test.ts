import t from 'tap'
import { Pool } from 'undici'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { OtlpReceiver, type ReceiverMode } from '../fixtures/otlp-receiver.js'
import { sampleValue } from '../../harness/prometheus.js'
import { startTracedService } from '../fixtures/traced-service.js'
import { until } from '../../harness/wait.js'

// Real sockets, a chain simulator and an OTLP receiver per case: slow on a busy machine.
t.setTimeout(180_000)

const QUEUE = 40
const REQUESTS = 300

// A collector that is down or slow never hurts serving: every request answered, the queue
// bounded, the losses counted and logged once, and the flush at exit bounded too.
for (const mode of ['refused', 'unavailable', 'hang'] as const) {
  t.test(`a collector that ${mode === 'refused' ? 'refuses connections' : mode === 'unavailable' ? 'answers 503' : 'never answers'}: serving unaffected, the queue bounded, drops counted and logged once`, async (t) => {
    const sim = await startChainSimulator()
    t.teardown(() => sim.close())
    const receiver = await OtlpReceiver.http()
    if (mode === 'refused') await receiver.close()
    else {
      receiver.mode = mode satisfies ReceiverMode
      t.teardown(() => receiver.close())
    }
    const { service, origin, log } = await startTracedService(t, [sim.url], receiver, {
      OTEL_BSP_MAX_QUEUE_SIZE: String(QUEUE),
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10',
      OTEL_EXPORTER_OTLP_TIMEOUT: '300',
      OTEL_HEADERS: 'authorization=Bearer s3cret'
    // Load shedding off: on a busy machine it would turn some of these away (untraced 503s).
    }, { loadShedding: { maxEventLoopDelay: 0 } })
    const tracing = service.tracing!
    const pool = new Pool(origin, { connections: 10 })
    t.teardown(() => pool.close())
    let maxQueued = 0
    let slowestMs = 0
    const statuses = await Promise.all(Array.from({ length: REQUESTS }, async () => {
      const started = performance.now()
      const res = await pool.request({ path: '/v1/status', method: 'GET' })
      await res.body.dump()
      slowestMs = Math.max(slowestMs, performance.now() - started)
      maxQueued = Math.max(maxQueued, tracing.queued)
      return res.statusCode
    }))
    t.same(statuses.filter((s) => s !== 200), [], `all ${REQUESTS} requests answered 200`)
    // Generous: the machine is shared; a request blocked on an export would wait 300 ms × retries.
    t.ok(slowestMs < 5000, `the slowest request took ${Math.round(slowestMs)} ms`)
    t.ok(maxQueued <= QUEUE, `the queue stayed within its bound (${maxQueued} ≤ ${QUEUE})`)

    const dropped = async (reason: string): Promise<number> => sampleValue(await service.metrics!.scrape(), 'edge_api_trace_spans_dropped_total', { reason }) ?? 0
    // A collector that never answers holds the one export in flight: the queue fills. One that
    // fails fast empties it batch by batch: the batches are lost instead, each counted when the
    // exporter gives up on it (its 300 ms timeout), which may come after the last answer.
    const reason = mode === 'hang' ? 'queue_full' : 'export_failed'
    await until(async () => await dropped(reason) > 0, `spans counted lost as ${reason}`)
    if (mode === 'hang') t.ok(await dropped('queue_full') > 0, `${await dropped('queue_full')} spans dropped because the queue was full`)
    else t.ok(await dropped('export_failed') > 0, `${await dropped('export_failed')} spans lost in failed exports`)
    const lines = log.lines.filter((l) => l.msg === 'trace spans dropped')
    t.equal(lines.length, 1, 'logged once in the interval')
    t.match(lines[0], { level: 40, queueFull: Number, exportFailed: Number })
    t.notOk(JSON.stringify(log.lines).includes('Bearer'), 'no header value in the log')

    const started = performance.now()
    const flushed = await tracing.shutdown(500)
    const tookMs = performance.now() - started
    // A collector that fails fast may have lost every span before the flush begins: nothing left to fail.
    if (mode === 'hang') t.equal(flushed, false, 'the flush could not complete')
    t.ok(tookMs < 1500, `the flush took ${Math.round(tookMs)} ms for a budget of 500 ms`)
    const lost = await dropped('queue_full') + await dropped('export_failed')
    // Spans in exports still hanging when the flush gave up are not counted (yet): at most the queue and a batch.
    if (mode === 'hang') t.ok(lost <= REQUESTS && lost >= REQUESTS - QUEUE - 10, `${lost} of ${REQUESTS} spans counted lost; the rest were still in flight`)
    else t.equal(lost, REQUESTS, 'every span is counted lost: none vanishes silently')
  })
}

t.test('a collector that answers 503, then recovers: the failed batches are counted, later ones arrive', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const receiver = await OtlpReceiver.http()
  t.teardown(() => receiver.close())
  receiver.mode = 'unavailable'
  const { service, origin } = await startTracedService(t, [sim.url], receiver, { OTEL_EXPORTER_OTLP_TIMEOUT: '200' })
  await (await fetch(`${origin}/v1/status`)).arrayBuffer()
  const failed = async (): Promise<number> => sampleValue(await service.metrics!.scrape(), 'edge_api_trace_spans_dropped_total', { reason: 'export_failed' }) ?? 0
  const { until } = await import('../../harness/wait.js')
  await until(async () => await failed() === 1, 'the failed export counted')
  receiver.mode = 'ok'
  await (await fetch(`${origin}/v1/status`)).arrayBuffer()
  await receiver.waitFor((s) => s.length === 1, 'the next span')
  t.equal(await service.tracing!.shutdown(2000), true, 'the flush at exit completes')
})
