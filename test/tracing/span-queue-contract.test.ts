import { ExportResultCode } from '@opentelemetry/core'
import { BasicTracerProvider, SamplingDecision, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import t from 'tap'
import { DropReport } from '../../src/tracing/drop-report.js'
import { SpanQueue } from '../../src/tracing/span-queue.js'

// The SpanProcessor contract as the SDK calls it, in process: a forced flush and a span that
// is recorded but not sampled (a custom sampler's RECORD decision).

function queueWith (exported: ReadableSpan[]): SpanQueue {
  const exporter: SpanExporter = {
    export: (spans, done) => { exported.push(...spans); done({ code: ExportResultCode.SUCCESS }) },
    shutdown: async () => {}
  }
  // A scheduled export a minute away: only the forced flush sends anything within the test.
  return new SpanQueue({ exporter, maxQueueSize: 10, maxExportBatchSize: 10, scheduleDelayMs: 60_000, exportTimeoutMs: 1000, drops: new DropReport({ warn: () => {} }) })
}

t.test('a forced flush exports what is queued at once', async (t) => {
  const exported: ReadableSpan[] = []
  const queue = queueWith(exported)
  const provider = new BasicTracerProvider({ spanProcessors: [queue] })
  t.teardown(() => provider.shutdown())
  const tracer = provider.getTracer('test')
  for (const name of ['a', 'b', 'c']) tracer.startSpan(name).end()
  t.equal(queue.queued, 3)
  t.equal(exported.length, 0, 'nothing before the flush')
  await provider.forceFlush()
  t.same(exported.map((s) => s.name), ['a', 'b', 'c'])
  t.equal(queue.queued, 0)
})

t.test('a span recorded but not sampled never queues', async (t) => {
  const exported: ReadableSpan[] = []
  const queue = queueWith(exported)
  const provider = new BasicTracerProvider({
    spanProcessors: [queue],
    sampler: { shouldSample: () => ({ decision: SamplingDecision.RECORD }), toString: () => 'record only' }
  })
  t.teardown(() => provider.shutdown())
  provider.getTracer('test').startSpan('recorded').end()
  t.equal(queue.queued, 0, 'not counted against the queue')
  await provider.forceFlush()
  t.same(exported, [], 'and never exported')
})
