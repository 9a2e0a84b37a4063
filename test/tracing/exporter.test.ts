import t from 'tap'
import { createExporter, ExportError, grpcTransport, sendWithRetries } from '../../src/tracing/exporter.js'
import { readTracingSettings } from '../../src/tracing/settings.js'
import { ServerSpanRecord, SpanContext } from '../../src/tracing/span-records.js'
import { OtlpReceiver } from '../fixtures/otlp-receiver.js'
import { until } from '../fixtures/wait.js'

// Real sockets, a chain simulator and an OTLP receiver per case: slow on a busy machine.
t.setTimeout(180_000)

const span = (): ServerSpanRecord => new ServerSpanRecord(new SpanContext('4bf92f3577b34da6a3ce929d0e0e4736', 'b7ad6b7169203331', '', '', true),
  'GET', '/v1/status', '/v1/status', 'http', 'r1', 1, 2, 200, false)

async function exporterTo (receiver: OtlpReceiver, protocol: 'http/protobuf' | 'grpc', env: Record<string, string> = {}) {
  const settings = readTracingSettings({
    EDGE_API_OTEL_ENABLED: 'true',
    ...(protocol === 'grpc' ? { OTEL_ENDPOINT: receiver.url } : { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url }),
    ...env
  }, [])!
  return await createExporter(settings, { 'service.name': 'edge-api' }, '9.9.9')
}

for (const protocol of ['http/protobuf', 'grpc'] as const) {
  t.test(`the ${protocol} exporter sends our serializer's request to the configured endpoint with the configured headers`, async (t) => {
    const receiver = protocol === 'grpc' ? await OtlpReceiver.grpc() : await OtlpReceiver.http()
    t.teardown(() => receiver.close())
    const exporter = await exporterTo(receiver, protocol, { OTEL_HEADERS: 'authorization=Bearer abc', OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=edge' })
    const result = await new Promise<{ code: number }>((resolve) => exporter.export([span()], resolve))
    t.equal(result.code, 0, 'the export succeeded')
    await receiver.waitFor((s) => s.length === 1, 'the span')
    t.match(receiver.spans[0], { name: 'GET /v1/status', scope: 'edge-api.server', scopeVersion: '9.9.9', resource: { 'service.name': 'edge-api' } })
    t.match(receiver.headers[0], { authorization: 'Bearer abc', 'x-tenant': 'edge', 'user-agent': /^edge-api\/9\.9\.9/ })
    t.same(await new Promise((resolve) => exporter.export([], resolve)), { code: 0 }, 'no spans: nothing to send')
    await exporter.shutdown()
    t.equal(receiver.headers.length, 1, 'one request in all')
  })

  t.test(`the ${protocol} exporter tries a transient failure (503, UNAVAILABLE) again, within OTEL_EXPORTER_OTLP_TIMEOUT`, async (t) => {
    const receiver = protocol === 'grpc' ? await OtlpReceiver.grpc() : await OtlpReceiver.http()
    t.teardown(() => receiver.close())
    receiver.mode = 'unavailable'
    const exporter = await exporterTo(receiver, protocol, { OTEL_EXPORTER_OTLP_TIMEOUT: '10000' })
    const result = new Promise<{ code: number }>((resolve) => exporter.export([span()], resolve))
    await until(() => receiver.headers.length === 1, 'the first attempt')
    receiver.mode = 'ok'
    t.equal((await result).code, 0, 'the second attempt succeeded')
    t.equal(receiver.headers.length, 2, 'two attempts')
    t.equal(receiver.spans.length, 1, 'the span arrived once')
    await exporter.shutdown()
  })
}

t.test('a failure that is not transient is not tried again', async (t) => {
  let attempts = 0
  const transport = {
    send: async () => { attempts++; throw new ExportError('OTLP/HTTP export answered 400', false) },
    close: async () => {}
  }
  await t.rejects(sendWithRetries(transport, new Uint8Array(1), 60_000), { message: 'OTLP/HTTP export answered 400' })
  t.equal(attempts, 1)
})

t.test('an https:// gRPC endpoint is reached over TLS: a plaintext receiver there gets no export', async (t) => {
  const receiver = await OtlpReceiver.grpc()
  t.teardown(() => receiver.close())
  const settings = readTracingSettings({ EDGE_API_OTEL_ENABLED: 'true', OTEL_ENDPOINT: receiver.url.replace(/^http:/, 'https:') }, [])!
  const transport = await grpcTransport(settings, 'edge-api/test')
  t.teardown(() => transport.close())
  await t.rejects(transport.send(new Uint8Array(0), 2000), { retryable: true, message: /OTLP\/gRPC export failed/ }, 'the TLS handshake fails: transient, as any connection failure')
  t.equal(receiver.headers.length, 0, 'nothing reached the receiver in plaintext')
})
