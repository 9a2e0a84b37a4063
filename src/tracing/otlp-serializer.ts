import { encoded, I32, I64, LEN, ProtobufWriter, tag, VARINT } from './protobuf-writer.js'
import { ChainSpanRecord, ServerSpanRecord, type SpanContext, type SpanRecord } from './span-records.js'

// An OTLP ExportTraceServiceRequest (opentelemetry/proto/collector/trace/v1/trace_service.proto
// and trace/v1/trace.proto) written straight from our span records, in one pass: one
// ResourceSpans, with a ScopeSpans for edge-api.server and one for edge-api.chain. What never
// changes is encoded once: the resource, the scopes, the attribute keys, and the values of a
// small set (methods, routes, path templates, outcomes). The SDK's OTLP transports send it
// (exporter.ts): this is the serializer they take (ISerializer of @opentelemetry/otlp-transformer).
// test/tracing/otlp-serializer.test.ts decodes it with the receiver's independent reader.

// Field tags, by message.
const REQUEST_RESOURCE_SPANS = tag(1, LEN)
const RESOURCE_SPANS_RESOURCE = tag(1, LEN)
const RESOURCE_SPANS_SCOPE_SPANS = tag(2, LEN)
const RESOURCE_ATTRIBUTES = tag(1, LEN)
const SCOPE_SPANS_SCOPE = tag(1, LEN)
const SCOPE_SPANS_SPANS = tag(2, LEN)
const SCOPE_NAME = tag(1, LEN)
const SCOPE_VERSION = tag(2, LEN)
const SPAN_TRACE_ID = tag(1, LEN)
const SPAN_SPAN_ID = tag(2, LEN)
const SPAN_TRACE_STATE = tag(3, LEN)
const SPAN_PARENT_SPAN_ID = tag(4, LEN)
const SPAN_NAME = tag(5, LEN)
const SPAN_KIND = tag(6, VARINT)
const SPAN_START = tag(7, I64)
const SPAN_END = tag(8, I64)
const SPAN_ATTRIBUTES = tag(9, LEN)
const SPAN_STATUS = tag(15, LEN)
// Field 16: its tag is two bytes, (16 << 3 | I32) as a varint.
const SPAN_FLAGS = new Uint8Array([((16 << 3) | I32) & 0x7f | 0x80, (16 << 3) >> 7])
const STATUS_CODE = tag(3, VARINT)
const KEY_VALUE_KEY = tag(1, LEN)
const KEY_VALUE_VALUE = tag(2, LEN)
const ANY_STRING = tag(1, LEN)
const ANY_BOOL = tag(2, VARINT)
const ANY_INT = tag(3, VARINT)

const KIND_SERVER = 2
const KIND_CLIENT = 3
const STATUS_ERROR = 2
/** Span.flags: the W3C trace flags (sampled), and whether the parent is remote (HAS_IS_REMOTE, IS_REMOTE). */
const FLAGS_LOCAL_PARENT = 0x01 | 0x100
const FLAGS_REMOTE_PARENT = 0x01 | 0x100 | 0x200

/** A KeyValue's key field, ahead of its value. */
function keyField (key: string): Uint8Array {
  return encoded((w) => {
    w.byte(KEY_VALUE_KEY)
    w.string(key)
  })
}

/** A whole attribute of a string value, its field's tag included (a span's attributes, or the resource's). */
function stringAttribute (w: ProtobufWriter, key: Uint8Array, value: string, field = SPAN_ATTRIBUTES): void {
  w.byte(field)
  const pair = w.begin(1)
  w.raw(key)
  w.byte(KEY_VALUE_VALUE)
  const any = w.begin(1)
  w.byte(ANY_STRING)
  w.string(value)
  w.end(any, 1)
  w.end(pair, 1)
}

function intAttribute (w: ProtobufWriter, key: Uint8Array, value: number): void {
  w.byte(SPAN_ATTRIBUTES)
  const pair = w.begin(1)
  w.raw(key)
  w.byte(KEY_VALUE_VALUE)
  const any = w.begin(1)
  w.byte(ANY_INT)
  w.varint(value)
  w.end(any, 1)
  w.end(pair, 1)
}

const boolAttribute = (key: Uint8Array): Uint8Array => encoded((w) => {
  w.byte(SPAN_ATTRIBUTES)
  const pair = w.begin(1)
  w.raw(key)
  w.byte(KEY_VALUE_VALUE)
  w.byte(2)
  w.byte(ANY_BOOL)
  w.byte(1)
  w.end(pair, 1)
})

/**
 * A span's first fields, as every span has them: its trace, its id, the trace's tracestate,
 * its parent ('' for a root), its name (encoded with its tag), its kind and its times.
 */
function spanHead (w: ProtobufWriter, spanId: string, parentSpanId: string, name: Uint8Array, kind: number,
  times: { readonly startMs: number, readonly endMs: number }, context: SpanContext): void {
  w.byte(SPAN_TRACE_ID)
  w.hex(context.traceId)
  w.byte(SPAN_SPAN_ID)
  w.hex(spanId)
  if (context.traceState !== '') {
    w.byte(SPAN_TRACE_STATE)
    w.string(context.traceState)
  }
  if (parentSpanId !== '') {
    w.byte(SPAN_PARENT_SPAN_ID)
    w.hex(parentSpanId)
  }
  w.raw(name)
  w.byte(SPAN_KIND)
  w.byte(kind)
  w.byte(SPAN_START)
  w.time(times.startMs)
  w.byte(SPAN_END)
  w.time(times.endMs)
}

const KEYS = {
  method: keyField('http.request.method'),
  path: keyField('url.path'),
  scheme: keyField('url.scheme'),
  requestId: keyField('edge_api.request_id'),
  route: keyField('http.route'),
  statusCode: keyField('http.response.status_code'),
  errorType: keyField('error.type'),
  template: keyField('url.template'),
  node: keyField('edge_api.chain.node'),
  attempt: keyField('edge_api.chain.attempt'),
  resendCount: keyField('http.request.resend_count'),
  outcome: keyField('edge_api.chain.outcome')
}
const DRAINING = boolAttribute(keyField('edge_api.draining'))
const HEDGE = boolAttribute(keyField('edge_api.chain.hedge'))
const ERROR_STATUS = encoded((w) => {
  w.byte(SPAN_STATUS)
  w.byte(2)
  w.byte(STATUS_CODE)
  w.byte(STATUS_ERROR)
})

/**
 * Encoded bytes of values from a small set (a method, a route, a template), made on first
 * use. Past `limit` values (a set larger than thought) each is encoded anew, never kept.
 */
class Memo {
  readonly #made = new Map<string, Uint8Array>()
  readonly #encode: (value: string) => Uint8Array
  readonly #limit: number

  constructor (encode: (value: string) => Uint8Array, limit = 1000) {
    this.#encode = encode
    this.#limit = limit
  }

  get (value: string): Uint8Array {
    let bytes = this.#made.get(value)
    if (bytes === undefined) {
      bytes = this.#encode(value)
      if (this.#made.size < this.#limit) this.#made.set(value, bytes)
    }
    return bytes
  }
}

const attributeOf = (key: Uint8Array) => new Memo((value) => encoded((w) => stringAttribute(w, key, value)))

export class OtlpTraceSerializer {
  readonly #writer = new ProtobufWriter()
  /** ResourceSpans.resource, whole. */
  readonly #resource: Uint8Array
  /** ScopeSpans.scope of each scope, whole. */
  readonly #serverScope: Uint8Array
  readonly #chainScope: Uint8Array
  readonly #methods = attributeOf(KEYS.method)
  readonly #schemes = attributeOf(KEYS.scheme)
  readonly #routes = attributeOf(KEYS.route)
  readonly #templates = attributeOf(KEYS.template)
  readonly #outcomes = attributeOf(KEYS.outcome)
  readonly #errorTypes = attributeOf(KEYS.errorType)
  /** Span names, by method then route ("GET /v1/status"; a 404's is its method alone), or by template ("GET /cosmos/…/{}"). */
  readonly #serverNames = new Map<string, Memo>()
  readonly #chainNames = new Memo((template) => encoded((w) => {
    w.byte(SPAN_NAME)
    w.string(`GET ${template}`)
  }))

  constructor (resource: Readonly<Record<string, string>>, scopeVersion: string) {
    this.#resource = encoded((w) => {
      w.byte(RESOURCE_SPANS_RESOURCE)
      const message = w.begin(2)
      for (const [key, value] of Object.entries(resource)) stringAttribute(w, keyField(key), value, RESOURCE_ATTRIBUTES)
      w.end(message, 2)
    })
    const scope = (name: string): Uint8Array => encoded((w) => {
      w.byte(SCOPE_SPANS_SCOPE)
      const message = w.begin(1)
      w.byte(SCOPE_NAME)
      w.string(name)
      w.byte(SCOPE_VERSION)
      w.string(scopeVersion)
      w.end(message, 1)
    })
    this.#serverScope = scope('edge-api.server')
    this.#chainScope = scope('edge-api.chain')
  }

  /** The export request of `spans`; undefined for none (the delegate sends nothing then). */
  serializeRequest (spans: readonly SpanRecord[]): Uint8Array | undefined {
    if (spans.length === 0) return undefined
    const w = this.#writer
    w.byte(REQUEST_RESOURCE_SPANS)
    const resourceSpans = w.begin(3)
    w.raw(this.#resource)
    let server = 0
    for (const span of spans) if (span instanceof ServerSpanRecord) server++
    if (server > 0) {
      w.byte(RESOURCE_SPANS_SCOPE_SPANS)
      const scopeSpans = w.begin(3)
      w.raw(this.#serverScope)
      for (const span of spans) if (span instanceof ServerSpanRecord) this.#server(w, span)
      w.end(scopeSpans, 3)
    }
    if (server < spans.length) {
      w.byte(RESOURCE_SPANS_SCOPE_SPANS)
      const scopeSpans = w.begin(3)
      w.raw(this.#chainScope)
      for (const span of spans) if (span instanceof ChainSpanRecord) this.#chain(w, span)
      w.end(scopeSpans, 3)
    }
    w.end(resourceSpans, 3)
    return w.take()
  }

  /**
   * The collector's answer. Its one field, partial_success, would only be logged by the SDK's
   * delegate through its diag logger, which edge-api does not install: nothing to read.
   */
  deserializeResponse (_data: Uint8Array): object {
    return {}
  }

  /** Span.name of a server span: its method and route (no string made per span). */
  #serverName (method: string, route: string | undefined): Uint8Array {
    let byRoute = this.#serverNames.get(method)
    if (byRoute === undefined) {
      byRoute = new Memo((path) => encoded((w) => {
        w.byte(SPAN_NAME)
        w.string(path === '' ? method : `${method} ${path}`)
      }))
      // Node's parser knows some 30 methods: a bounded set.
      this.#serverNames.set(method, byRoute)
    }
    return byRoute.get(route ?? '')
  }

  #server (w: ProtobufWriter, span: ServerSpanRecord): void {
    const { context } = span
    w.byte(SCOPE_SPANS_SPANS)
    const message = w.begin(2)
    spanHead(w, context.spanId, context.parentSpanId, this.#serverName(span.method, span.route), KIND_SERVER, span, context)
    w.raw(this.#methods.get(span.method))
    stringAttribute(w, KEYS.path, span.path)
    w.raw(this.#schemes.get(span.scheme))
    stringAttribute(w, KEYS.requestId, span.requestId)
    if (span.route !== undefined) w.raw(this.#routes.get(span.route))
    if (span.draining) w.raw(DRAINING)
    const { statusCode } = span
    if (statusCode === undefined) {
      // The semantic conventions' error.type for a request the client gave up on.
      w.raw(this.#errorTypes.get('aborted'))
    } else {
      intAttribute(w, KEYS.statusCode, statusCode)
      // Server spans: 5xx is an error, 4xx is the client's (the conventions' rule).
      if (statusCode >= 500) {
        w.raw(this.#errorTypes.get(String(statusCode)))
        w.raw(ERROR_STATUS)
      }
    }
    w.raw(SPAN_FLAGS)
    w.fixed32(context.parentSpanId === '' ? FLAGS_LOCAL_PARENT : FLAGS_REMOTE_PARENT)
    w.end(message, 2)
  }

  #chain (w: ProtobufWriter, span: ChainSpanRecord): void {
    const { context } = span
    w.byte(SCOPE_SPANS_SPANS)
    const message = w.begin(2)
    spanHead(w, span.spanId, context.spanId, this.#chainNames.get(span.template), KIND_CLIENT, span, context)
    w.raw(this.#methods.get('GET'))
    w.raw(this.#templates.get(span.template))
    intAttribute(w, KEYS.node, span.node)
    intAttribute(w, KEYS.attempt, span.attempt)
    // The conventions' count of resends: attempts on other nodes after the first.
    if (span.attempt > 1) intAttribute(w, KEYS.resendCount, span.attempt - 1)
    // A hedged read's second attempt, sent while the first was still waiting (docs/hedged-reads.md).
    if (span.hedge) w.raw(HEDGE)
    w.raw(this.#outcomes.get(span.outcome))
    if (span.outcome !== 'ok') {
      w.raw(this.#errorTypes.get(span.outcome))
      w.raw(ERROR_STATUS)
    }
    w.raw(SPAN_FLAGS)
    w.fixed32(FLAGS_LOCAL_PARENT)
    w.end(message, 2)
  }
}
