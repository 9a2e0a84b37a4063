import t from 'tap'
import { createExporter, ExportError, grpcTransport, sendWithRetries } from '../../src/tracing/exporter.js'
import { readTracingSettings } from '../../src/tracing/settings.js'
import { ServerSpanRecord, SpanContext } from '../../src/tracing/span-records.js'
import { OtlpReceiver, type ReceiverOptions } from '../fixtures/otlp-receiver.js'
import { makeTlsFiles } from '../fixtures/tls-certs.js'
import { until } from '../../harness/wait.js'

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

const spans = (n: number): ServerSpanRecord[] => Array.from({ length: n }, span)
const exportOnce = async (exporter: Awaited<ReturnType<typeof exporterTo>>, batch = [span()]): Promise<{ code: number, error?: Error }> =>
  await new Promise((resolve) => exporter.export(batch, resolve))

t.test('OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=gzip over OTEL_EXPORTER_OTLP_COMPRESSION=none: an OTLP/HTTP body is gzipped, Content-Encoding: gzip', async (t) => {
  const receiver = await OtlpReceiver.http()
  t.teardown(() => receiver.close())
  const exporter = await exporterTo(receiver, 'http/protobuf', { OTEL_EXPORTER_OTLP_COMPRESSION: 'none', OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'gzip' })
  t.equal((await exportOnce(exporter)).code, 0)
  t.equal(receiver.headers[0]?.['content-encoding'], 'gzip')
  t.match(receiver.spans, [{ name: 'GET /v1/status' }], 'the receiver gunzipped and decoded it')
  await exporter.shutdown()
  const plain = await exporterTo(receiver, 'http/protobuf', { OTEL_EXPORTER_OTLP_COMPRESSION: 'none' })
  t.equal((await exportOnce(plain)).code, 0)
  t.equal(receiver.headers[1]?.['content-encoding'], undefined, 'none: no Content-Encoding')
  await plain.shutdown()
})

t.test('OTEL_EXPORTER_OTLP_COMPRESSION=gzip: an OTLP/gRPC message is gzipped by grpc-js (fewer bytes on the wire for the same batch)', async (t) => {
  const sent = async (env: Record<string, string>): Promise<number> => {
    const receiver = await OtlpReceiver.grpc({ countBytes: true })
    t.teardown(() => receiver.close())
    const exporter = await exporterTo(receiver, 'grpc', env)
    t.equal((await exportOnce(exporter, spans(200))).code, 0)
    t.equal(receiver.spans.length, 200, 'every span arrived')
    await exporter.shutdown()
    return receiver.bytesReceived
  }
  const plain = await sent({})
  const gzipped = await sent({ OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' })
  t.ok(gzipped * 4 < plain, `gzip sent ${gzipped} bytes, none ${plain}`)
})

for (const protocol of ['http/protobuf', 'grpc'] as const) {
  const receiverOf = async (options: ReceiverOptions): Promise<OtlpReceiver> => protocol === 'grpc' ? await OtlpReceiver.grpc(options) : await OtlpReceiver.http(options)
  // One short try: a refused handshake fails the export without waiting for retries.
  const short = { OTEL_EXPORTER_OTLP_TIMEOUT: '500' }

  t.test(`${protocol} over https://: the collector's certificate is checked against OTEL_EXPORTER_OTLP_CERTIFICATE`, async (t) => {
    const files = makeTlsFiles()
    t.teardown(() => files.remove())
    const receiver = await receiverOf({ tls: files })
    t.teardown(() => receiver.close())
    const trusting = await exporterTo(receiver, protocol, { OTEL_EXPORTER_OTLP_CERTIFICATE: files.caCert })
    t.equal((await exportOnce(trusting)).code, 0, 'signed by the configured CA: sent')
    await trusting.shutdown()
    t.same(receiver.clients, [''], 'over TLS, without a client certificate')
    const systemRoots = await exporterTo(receiver, protocol, short)
    t.match(await exportOnce(systemRoots), { code: 1, error: { message: /export failed/ } }, 'without the CA the system\'s roots refuse it')
    await systemRoots.shutdown()
    t.equal(receiver.requests, 1, 'and nothing was sent')
  })

  t.test(`${protocol} mTLS: OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE and _CLIENT_KEY are presented to a collector that requires them`, async (t) => {
    const files = makeTlsFiles()
    t.teardown(() => files.remove())
    const receiver = await receiverOf({ tls: files, clientCertificate: true })
    t.teardown(() => receiver.close())
    const client = await exporterTo(receiver, protocol, {
      OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: files.caCert,
      OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE: files.clientCert,
      OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: files.clientKey
    })
    t.equal((await exportOnce(client)).code, 0, 'mTLS: sent')
    await client.shutdown()
    t.same(receiver.clients, ['edge-api-client'], 'the collector saw our client certificate')
    t.match(receiver.spans, [{ name: 'GET /v1/status' }])
    const anonymous = await exporterTo(receiver, protocol, { OTEL_EXPORTER_OTLP_CERTIFICATE: files.caCert, ...short })
    t.equal((await exportOnce(anonymous)).code, 1, 'without a client certificate the collector refuses it')
    await anonymous.shutdown()
    t.equal(receiver.spans.length, 1, 'and nothing more arrived')
  })
}

t.test('a gRPC endpoint without a scheme: TLS, or plaintext with OTEL_EXPORTER_OTLP_INSECURE=true', async (t) => {
  const files = makeTlsFiles()
  t.teardown(() => files.remove())
  const plaintext = await OtlpReceiver.grpc()
  t.teardown(() => plaintext.close())
  const insecure = await exporterTo(plaintext, 'grpc', { OTEL_ENDPOINT: plaintext.url.replace('http://', ''), OTEL_EXPORTER_OTLP_INSECURE: 'true' })
  t.equal((await exportOnce(insecure)).code, 0, 'INSECURE=true: plaintext')
  await insecure.shutdown()
  const tls = await OtlpReceiver.grpc({ tls: files })
  t.teardown(() => tls.close())
  const secure = await exporterTo(tls, 'grpc', {
    OTEL_ENDPOINT: tls.url.replace('https://', ''),
    OTEL_EXPORTER_OTLP_INSECURE: 'true',
    OTEL_EXPORTER_OTLP_TRACES_INSECURE: 'false',
    OTEL_EXPORTER_OTLP_CERTIFICATE: files.caCert
  })
  t.equal((await exportOnce(secure)).code, 0, 'TRACES_INSECURE=false over INSECURE=true: TLS')
  await secure.shutdown()
  t.equal(plaintext.spans.length + tls.spans.length, 2)
})
