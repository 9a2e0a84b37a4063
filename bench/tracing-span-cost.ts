// What one span costs, in this process, CPU per span: the OpenTelemetry SDK's pipeline against
// edge-api's own (src/tracing/: a plain record, its batch queue, its serializer in the SDK's
// OTLP/HTTP export delegate), why edge-api left the SDK's span and processor (docs/tracing.md,
// Cost). Alternating rounds of: the SDK's span made and ended (no processor); plus the batch
// span processor with an exporter that does nothing; plus the OTLP/HTTP protobuf exporter
// sending to a collector stand-in (in this process: its share, one small request per batch, is
// counted too); then edge-api's record made, plus its queue, plus its export to the same
// stand-in. The span is the server span edge-api makes for GET /v1/status, with its six attributes.
//   npx tsx bench/tracing-span-cost.ts      (ROUNDS=7 BATCH=512)
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { DropReport } from '../src/tracing/drop-report.js'
import { createExporter } from '../src/tracing/exporter.js'
import { newSpanId, newTraceId } from '../src/tracing/ids.js'
import { readTracingSettings } from '../src/tracing/settings.js'
import { SpanQueue } from '../src/tracing/span-queue.js'
import { ServerSpanRecord, SpanContext } from '../src/tracing/span-records.js'
import { median } from './lib/stats.js'

const ROUNDS = Number(process.env.ROUNDS ?? 7)
const BATCH = Number(process.env.BATCH ?? 512)
/** 10 000 spans a round, 100 per tick with a timer between: a server's pace, so exports run. */
const TICKS = 100
const PER_TICK = 100

const sink = createServer((req, res) => {
  req.resume()
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end())
})
sink.listen(0, '127.0.0.1')
await once(sink, 'listening')
const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/v1/traces`

const nothing: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} }
const batch = (exporter: SpanExporter): SpanProcessor => new BatchSpanProcessor(exporter, { maxQueueSize: 2048, maxExportBatchSize: BATCH, scheduledDelayMillis: 5000 })
const resource = resourceFromAttributes({ 'service.name': 'edge-api', 'service.version': '0.1.0' })
const pipelines = {
  'span made and ended': new BasicTracerProvider({ resource }),
  '+ batch processor, exporter doing nothing': new BasicTracerProvider({ resource, spanProcessors: [batch(nothing)] }),
  '+ OTLP/HTTP protobuf export': new BasicTracerProvider({ resource, spanProcessors: [batch(new OTLPTraceExporter({ url }))] })
}

// edge-api's own: the settings' defaults but for the batch size.
const settings = readTracingSettings({ EDGE_API_OTEL_ENABLED: 'true', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: String(BATCH) }, [])!
const ownResource = { 'service.name': 'edge-api', 'service.version': '0.1.0' }
const drops = new DropReport({ warn: () => {} })
const queueOf = async (exporter: Parameters<typeof createExporter>[0] | 'none'): Promise<SpanQueue> => new SpanQueue({
  exporter: exporter === 'none' ? { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} } : await createExporter(exporter, ownResource, '0.1.0'),
  ...settings.batch,
  drops
})
type Own = { queue: SpanQueue | undefined }
const own: Record<string, Own> = {
  'edge-api: record made': { queue: undefined },
  'edge-api: + its batch queue, exporter doing nothing': { queue: await queueOf('none') },
  'edge-api: + its OTLP/HTTP protobuf export': { queue: await queueOf(settings) }
}

let id = 0
async function round (pipeline: BasicTracerProvider | Own): Promise<number> {
  if (!(pipeline instanceof BasicTracerProvider)) return await ownRound(pipeline)
  const tracer = pipeline.getTracer('edge-api.server', '0.1.0')
  const before = process.cpuUsage()
  for (let tick = 0; tick < TICKS; tick++) {
    for (let i = 0; i < PER_TICK; i++) {
      const span = tracer.startSpan('GET /v1/status', {
        kind: SpanKind.SERVER,
        startTime: performance.now(),
        attributes: { 'http.request.method': 'GET', 'url.path': '/v1/status', 'url.scheme': 'http', 'edge_api.request_id': `req-${id++}`, 'http.route': '/v1/status' }
      }, ROOT_CONTEXT)
      span.setAttribute('http.response.status_code', 200)
      span.end()
    }
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  const used = process.cpuUsage(before)
  return (used.user + used.system) / (TICKS * PER_TICK)
}

/** What server-spans.ts does at a sampled request's end: its context (ids drawn), its record, queued. */
async function ownRound ({ queue }: Own): Promise<number> {
  const before = process.cpuUsage()
  for (let tick = 0; tick < TICKS; tick++) {
    for (let i = 0; i < PER_TICK; i++) {
      const context = new SpanContext(newTraceId(), newSpanId(), '', '', true)
      const span = new ServerSpanRecord(context, 'GET', '/v1/status', '/v1/status', 'http', `req-${id++}`, performance.now(), performance.now(), 200, false)
      queue?.add(span)
    }
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  const used = process.cpuUsage(before)
  return (used.user + used.system) / (TICKS * PER_TICK)
}

const all: Record<string, BasicTracerProvider | Own> = { ...pipelines, ...own }
const names = Object.keys(all)
const cpu = new Map(names.map((name) => [name, [] as number[]]))
for (const name of names) await round(all[name] as BasicTracerProvider | Own)
for (let r = 0; r < ROUNDS; r++) {
  for (const name of r % 2 === 0 ? names : names.toReversed()) cpu.get(name)?.push(await round(all[name] as BasicTracerProvider | Own))
}
for (const name of names) {
  const values = cpu.get(name) as number[]
  console.log(`${name}: ${median(values).toFixed(2)} µs CPU per span (median of ${ROUNDS}; ${values.map((v) => v.toFixed(1)).join(', ')})`)
}
for (const provider of Object.values(pipelines)) await provider.shutdown().catch(() => {})
for (const { queue } of Object.values(own)) await queue?.shutdown()
sink.close()
