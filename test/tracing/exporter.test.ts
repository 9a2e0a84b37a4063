import { readFileSync } from 'node:fs'
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import t from 'tap'
import { createExporter } from '../../src/tracing/exporter.js'
import { readTracingSettings } from '../../src/tracing/settings.js'
import { OtlpReceiver } from '../fixtures/otlp-receiver.js'

// Real sockets, a chain simulator and an OTLP receiver per case: slow on a busy machine.
t.setTimeout(180_000)

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

for (const protocol of ['http/protobuf', 'grpc'] as const) {
  t.test(`the ${protocol} exporter sends to the configured endpoint with the configured headers`, async (t) => {
    const receiver = protocol === 'grpc' ? await OtlpReceiver.grpc() : await OtlpReceiver.http()
    t.teardown(() => receiver.close())
    const settings = readTracingSettings({
      EDGE_API_OTEL_ENABLED: 'true',
      ...(protocol === 'grpc' ? { OTEL_ENDPOINT: receiver.url } : { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url }),
      OTEL_HEADERS: 'authorization=Bearer abc',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=edge'
    }, [])!
    const exporter = await createExporter(settings)
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    provider.getTracer('test').startSpan('one').end()
    await provider.forceFlush()
    await receiver.waitFor((s) => s.length === 1, 'the span')
    t.equal(receiver.spans[0]?.name, 'one')
    t.match(receiver.headers[0], { authorization: 'Bearer abc', 'x-tenant': 'edge', 'user-agent': /OTel-OTLP-Exporter-JavaScript\/|grpc-node-js\// })
    t.ok(VERSION, 'package version read')
    await provider.shutdown()
  })
}
