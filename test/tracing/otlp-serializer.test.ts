import t from 'tap'
import { OtlpTraceSerializer } from '../../src/tracing/otlp-serializer.js'
import { ChainSpanRecord, ServerSpanRecord, SpanContext } from '../../src/tracing/span-records.js'
import { CLIENT, decodeExportRequest, SERVER } from '../fixtures/otlp-receiver.js'

// Our OTLP protobuf against the receiver's reader (test/fixtures/otlp-receiver.ts, written
// from trace.proto with @bufbuild/protobuf's wire reader, independent of the serializer): every
// field of both kinds of span, the resource and the scopes, times to the nanosecond.

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER = '00f067aa0ba902b7'
const SERVER_SPAN = 'b7ad6b7169203331'
const serializer = new OtlpTraceSerializer({ 'service.version': '1.2.3', 'service.name': 'edge-eu', 'k8s.pod.name': 'edge-api-7' }, '1.2.3')

/** The Unix-epoch nanoseconds of `context`'s performance.now() time `ms`, by BigInt arithmetic (its wall clock plus the monotonic time since). */
const epochNs = (context: SpanContext, ms: number): bigint => BigInt(context.wallClockMs) * 1_000_000n + BigInt(Math.round((ms - context.monotonicMs) * 1e6))

t.test('a server span and its chain spans: ids, parent, trace state, name, kind, times, attributes, status, flags, scope, resource', async (t) => {
  const context = new SpanContext(TRACE, SERVER_SPAN, CALLER, 'vendor=a,other=b', true)
  const start = performance.now()
  const server = new ServerSpanRecord(context, 'GET', '/v1/epochs/:epoch/participants', '/v1/epochs/current/participants', 'http', 'r1', start, start + 12.345678, 200, false)
  const chain = new ChainSpanRecord(context, '1111111111111111', '/productscience/inference/inference/epoch_info', 2, 3, true, start + 1)
  chain.endMs = start + 2.5
  chain.outcome = 'timeout'
  const spans = decodeExportRequest(serializer.serializeRequest([chain, server])!)
  t.equal(spans.length, 2)
  const s = spans.find((span) => span.kind === SERVER)!
  t.same({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId, traceState: s.traceState, name: s.name, statusCode: s.statusCode, scope: s.scope, scopeVersion: s.scopeVersion },
    { traceId: TRACE, spanId: SERVER_SPAN, parentSpanId: CALLER, traceState: 'vendor=a,other=b', name: 'GET /v1/epochs/:epoch/participants', statusCode: 0, scope: 'edge-api.server', scopeVersion: '1.2.3' })
  t.equal(s.flags, 0x301, 'sampled, with a remote parent (HAS_IS_REMOTE | IS_REMOTE)')
  t.same(s.attributes, {
    'http.request.method': 'GET',
    'url.path': '/v1/epochs/current/participants',
    'url.scheme': 'http',
    'edge_api.request_id': 'r1',
    'http.route': '/v1/epochs/:epoch/participants',
    'http.response.status_code': 200
  })
  t.same(s.resource, { 'service.version': '1.2.3', 'service.name': 'edge-eu', 'k8s.pod.name': 'edge-api-7' })
  t.equal(s.startNs, epochNs(context, start), `start ${s.startNs} is the request's wall clock + the monotonic time since`)
  t.equal(Number(s.endNs - s.startNs), 12_345_678, 'the duration to the nanosecond')

  const c = spans.find((span) => span.kind === CLIENT)!
  t.same({ traceId: c.traceId, spanId: c.spanId, parentSpanId: c.parentSpanId, traceState: c.traceState, name: c.name, statusCode: c.statusCode, scope: c.scope, flags: c.flags },
    { traceId: TRACE, spanId: '1111111111111111', parentSpanId: SERVER_SPAN, traceState: 'vendor=a,other=b', name: 'GET /productscience/inference/inference/epoch_info', statusCode: 2, scope: 'edge-api.chain', flags: 0x101 })
  t.same(c.attributes, {
    'http.request.method': 'GET',
    'url.template': '/productscience/inference/inference/epoch_info',
    'edge_api.chain.node': 2,
    'edge_api.chain.attempt': 3,
    'http.request.resend_count': 2,
    'edge_api.chain.hedge': true,
    'edge_api.chain.outcome': 'timeout',
    'error.type': 'timeout'
  })
  t.equal(Number(c.endNs - c.startNs), 1_500_000)
})

t.test('span times follow the wall clock read when the trace began, not performance.timeOrigin: a process up for weeks, its monotonic clock drifted', async (t) => {
  // The monotonic clock says 40 days since timeOrigin, the wall clock says a minute more: the wall clock wins.
  const monotonicMs = 40 * 86_400_000 + 0.123456
  const wallClockMs = Math.round(performance.timeOrigin + monotonicMs) + 60_000
  const context = new SpanContext(TRACE, SERVER_SPAN, '', '', true, wallClockMs, monotonicMs)
  const span = new ServerSpanRecord(context, 'GET', '/v1/status', '/v1/status', 'http', 'r1', monotonicMs - 0.5, monotonicMs + 2.000001, 200, false)
  const [s] = decodeExportRequest(serializer.serializeRequest([span])!)
  t.equal(s!.startNs, BigInt(wallClockMs) * 1_000_000n - 500_000n, 'started 0.5 ms before the wall clock was read')
  t.equal(s!.endNs - s!.startNs, 2_500_001n, 'the duration to the nanosecond')
  const early = new SpanContext(TRACE, SERVER_SPAN, '', '', true, 1_048_575, 10)
  const [e] = decodeExportRequest(serializer.serializeRequest([new ServerSpanRecord(early, 'GET', '/v1/status', '/v1/status', 'http', 'r1', 10, 11, 200, false)])!)
  t.same([e!.startNs, e!.endNs], [1_048_575_000_000n, 1_048_576_000_000n], 'across a carry between the fixed64\'s halves')
})

t.test('a root span, a 5xx, an aborted request, the drain, a 404; non-ASCII and long strings; a big batch', async (t) => {
  const root = new SpanContext(TRACE, SERVER_SPAN, '', '', true)
  const long = `/v1/participants/${'é'.repeat(80)}${'x'.repeat(300)}`
  const records = [
    new ServerSpanRecord(root, 'GET', '/v1/status', '/v1/status', 'https', 'req-é', 1, 2, 503, true),
    new ServerSpanRecord(root, 'GET', '/v1/models', '/v1/models', 'http', 'r2', 1, 2, undefined, false),
    new ServerSpanRecord(root, 'POST', undefined, long, 'http', 'r3', 1, 2, 404, false)
  ]
  const [failed, aborted, notFound] = decodeExportRequest(serializer.serializeRequest(records)!)
  t.same([failed!.parentSpanId, failed!.traceState, failed!.flags], ['', '', 0x101], 'a root: no parent, no trace state, HAS_IS_REMOTE without IS_REMOTE')
  t.same([failed!.statusCode, failed!.attributes['error.type'], failed!.attributes['edge_api.draining'], failed!.attributes['url.scheme'], failed!.attributes['edge_api.request_id']], [2, '503', true, 'https', 'req-é'])
  t.same([aborted!.statusCode, aborted!.attributes['error.type'], 'http.response.status_code' in aborted!.attributes], [0, 'aborted', false])
  t.same([notFound!.name, notFound!.attributes['url.path'], 'http.route' in notFound!.attributes, notFound!.statusCode], ['POST', long, false, 0], 'a 404: its method alone, the long path whole')

  const many = Array.from({ length: 3000 }, (_, i) => new ServerSpanRecord(root, 'GET', '/v1/status', `/v1/status/${i}`, 'http', `r${i}`, i, i + 1, 200, false))
  const decoded = decodeExportRequest(serializer.serializeRequest(many)!)
  t.equal(decoded.length, 3000, 'a batch larger than the writer\'s first buffer')
  t.same(decoded.map((s) => s.attributes['url.path']), many.map((s) => s.path), 'in order, each its own')
  t.equal(serializer.serializeRequest([]), undefined, 'nothing to send for no spans')
})

t.test('constant blocks: each kind of span its own, the same kind the same; past the bound and for an unknown scheme, encoded for the span alone', async (t) => {
  const root = new SpanContext(TRACE, SERVER_SPAN, '', '', true)
  const child = new SpanContext(TRACE, SERVER_SPAN, CALLER, '', true)
  // One block kept: every later kind is encoded anew, and must come out the same as a kept one.
  const small = new OtlpTraceSerializer({ 'service.name': 'edge-api' }, '1.2.3', 1)
  const kinds = [
    new ServerSpanRecord(root, 'GET', '/v1/status', '/v1/status', 'http', 'a', 1, 2, 200, false),
    new ServerSpanRecord(root, 'GET', '/v1/status', '/v1/status', 'http', 'b', 1, 2, 304, false),
    new ServerSpanRecord(child, 'GET', '/v1/status', '/v1/status', 'http', 'c', 1, 2, 200, false),
    new ServerSpanRecord(root, 'HEAD', '/v1/status', '/v1/status', 'http', 'd', 1, 2, 200, true),
    new ServerSpanRecord(root, 'GET', '/v1/epochs/:epoch', '/v1/epochs/7', 'https', 'e', 1, 2, 200, false),
    new ServerSpanRecord(root, 'GET', undefined, '/nowhere', 'http', 'f', 1, 2, 404, false),
    // Not a scheme Fastify reports; its block is not kept, and not mistaken for http's.
    new ServerSpanRecord(root, 'GET', '/v1/status', '/v1/status', 'constructor', 'g', 1, 2, 200, false)
  ]
  for (const each of [serializer, small]) {
    // Twice: the second pass reads what the first kept.
    for (let pass = 0; pass < 2; pass++) {
      const decoded = decodeExportRequest(each.serializeRequest(kinds)!)
      t.same(decoded.map((s) => [s.name, s.attributes['http.request.method'], s.attributes['url.path'], s.attributes['url.scheme'], s.attributes['http.route'],
        s.attributes['http.response.status_code'], s.attributes['edge_api.draining'] ?? false, s.attributes['edge_api.request_id'], s.parentSpanId, s.flags]), [
        ['GET /v1/status', 'GET', '/v1/status', 'http', '/v1/status', 200, false, 'a', '', 0x101],
        ['GET /v1/status', 'GET', '/v1/status', 'http', '/v1/status', 304, false, 'b', '', 0x101],
        ['GET /v1/status', 'GET', '/v1/status', 'http', '/v1/status', 200, false, 'c', CALLER, 0x301],
        ['HEAD /v1/status', 'HEAD', '/v1/status', 'http', '/v1/status', 200, true, 'd', '', 0x101],
        ['GET /v1/epochs/:epoch', 'GET', '/v1/epochs/7', 'https', '/v1/epochs/:epoch', 200, false, 'e', '', 0x101],
        ['GET', 'GET', '/nowhere', 'http', undefined, 404, false, 'f', '', 0x101],
        ['GET /v1/status', 'GET', '/v1/status', 'constructor', '/v1/status', 200, false, 'g', '', 0x101]
      ], `pass ${pass + 1}`)
    }
  }
  const chainKinds = [1, 2].flatMap((node) => (['ok', 'timeout', 'abandoned'] as const).map((outcome) => {
    const span = new ChainSpanRecord(root, '2222222222222222', '/cosmos/base/tendermint/v1beta1/blocks/{}', node, node, node === 2, 1)
    span.endMs = 2
    span.outcome = outcome
    return span
  }))
  for (let pass = 0; pass < 2; pass++) {
    t.same(decodeExportRequest(small.serializeRequest(chainKinds)!).map((s) => [s.attributes['edge_api.chain.node'], s.attributes['edge_api.chain.attempt'],
      s.attributes['edge_api.chain.hedge'] ?? false, s.attributes['edge_api.chain.outcome'], s.statusCode, s.attributes['error.type']]), [
      [1, 1, false, 'ok', 0, undefined], [1, 1, false, 'timeout', 2, 'timeout'], [1, 1, false, 'abandoned', 0, undefined],
      [2, 2, true, 'ok', 0, undefined], [2, 2, true, 'timeout', 2, 'timeout'], [2, 2, true, 'abandoned', 0, undefined]
    ], 'an attempt abandoned (its hedged pair answered first) is not an error')
  }
})
