import t from 'tap'
import { createExporter } from '../../src/tracing/exporter.js'
import { readTracingSettings } from '../../src/tracing/settings.js'
import { ServerSpanRecord, SpanContext } from '../../src/tracing/span-records.js'
import { OtlpReceiver } from '../fixtures/otlp-receiver.js'

// Real sockets, a chain simulator and an OTLP receiver per case: slow on a busy machine.
t.setTimeout(180_000)

for (const protocol of ['http/protobuf', 'grpc'] as const) {
  t.test(`the ${protocol} exporter sends our serializer's request to the configured endpoint with the configured headers`, async (t) => {
    const receiver = protocol === 'grpc' ? await OtlpReceiver.grpc() : await OtlpReceiver.http()
    t.teardown(() => receiver.close())
    const settings = readTracingSettings({
      EDGE_API_OTEL_ENABLED: 'true',
      ...(protocol === 'grpc' ? { OTEL_ENDPOINT: receiver.url } : { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url }),
      OTEL_HEADERS: 'authorization=Bearer abc',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=edge'
    }, [])!
    const exporter = await createExporter(settings, { 'service.name': 'edge-api' }, '9.9.9')
    const context = new SpanContext('4bf92f3577b34da6a3ce929d0e0e4736', 'b7ad6b7169203331', '', '', true)
    const result = await new Promise<{ code: number }>((resolve) => exporter.export([new ServerSpanRecord(context, 'GET', '/v1/status', '/v1/status', 'http', 'r1', 1, 2, 200, false)], resolve))
    t.equal(result.code, 0, 'the export succeeded')
    await receiver.waitFor((s) => s.length === 1, 'the span')
    t.match(receiver.spans[0], { name: 'GET /v1/status', scope: 'edge-api.server', scopeVersion: '9.9.9', resource: { 'service.name': 'edge-api' } })
    t.match(receiver.headers[0], { authorization: 'Bearer abc', 'x-tenant': 'edge', 'user-agent': /OTel-OTLP-Exporter-JavaScript\/|grpc-node-js\// })
    await exporter.shutdown()
  })
}
