import { encoded, I32, I64, LEN, ProtobufWriter, tag, VARINT } from './protobuf-writer.js'
import { ChainSpanRecord, ServerSpanRecord, type SpanContext, type SpanRecord } from './span-records.js'

// An OTLP ExportTraceServiceRequest (opentelemetry/proto/collector/trace/v1/trace_service.proto
// and trace/v1/trace.proto) written straight from our span records, in one pass: one
// ResourceSpans, with a ScopeSpans for edge-api.server and one for edge-api.chain. What never
// changes is encoded once: the resource, the scopes, the attribute keys, and each kind of
// span's constant fields (ConstantBlocks), so a span costs its ids, times and an id or two.
// The SDK's OTLP transports send it (exporter.ts): this is the serializer they take
// (ISerializer of @opentelemetry/otlp-transformer).
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
 * The fields that differ from span to span, as every span has them: its trace, its id, the
 * trace's tracestate, its parent ('' for a root) and its times.
 */
function spanIdsAndTimes (w: ProtobufWriter, spanId: string, parentSpanId: string,
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

function errorStatus (w: ProtobufWriter): void {
  w.byte(SPAN_STATUS)
  w.byte(2)
  w.byte(STATUS_CODE)
  w.byte(STATUS_ERROR)
}

/** A span's name (Span.name) and kind. */
function nameAndKind (w: ProtobufWriter, name: string, kind: number): void {
  w.byte(SPAN_NAME)
  w.string(name)
  w.byte(SPAN_KIND)
  w.byte(kind)
}

/** How many constant blocks a serializer keeps (each ~150 bytes); past it, a block is encoded for its one span and not kept. */
export const CONSTANT_BLOCKS = 4096

/**
 * The encoded fields a span shares with every span of its kind, by two strings and a number
 * (a server span's method, route and answer; a chain span's template, outcome and attempt):
 * encoded at a kind's first span, then copied whole. Protobuf takes a message's fields in any
 * order, so a span is written as its own fields (ids, times, an attribute or two) followed by
 * this block.
 */
class ConstantBlocks {
  readonly #blocks = new Map<string, Map<string, Map<number, Uint8Array>>>()
  readonly #limit: number
  #size = 0

  constructor (limit: number) {
    this.#limit = limit
  }

  /** The block of `span`'s kind; `n` undefined for a kind that is never kept (encoded for its one span, as past the bound). */
  get<Span> (a: string, b: string, n: number | undefined, span: Span, encode: (w: ProtobufWriter, span: Span) => void): Uint8Array {
    let byB = this.#blocks.get(a)
    let byN = byB?.get(b)
    let block = n === undefined ? undefined : byN?.get(n)
    if (block !== undefined) return block
    block = encoded((w) => encode(w, span))
    if (n === undefined || this.#size >= this.#limit) return block
    if (byB === undefined) this.#blocks.set(a, byB = new Map())
    if (byN === undefined) byB.set(b, byN = new Map())
    byN.set(n, block)
    this.#size++
    return block
  }
}

/** A server span's scheme, as a number for serverKind: Fastify's request.protocol is one of these two. */
const SCHEMES: ReadonlyMap<string, number> = new Map([['http', 0], ['https', 1]])

/**
 * The number that, with its method and route, says which constant block a server span takes:
 * its status (0 when the client left), its scheme, and four flags; undefined for a scheme
 * other than http and https, whose block is not kept. The path goes in the block when it is
 * the route itself (a route without parameters), else it is written per span.
 */
function serverKind (span: ServerSpanRecord): number | undefined {
  const scheme = SCHEMES.get(span.scheme)
  if (scheme === undefined) return undefined
  const flags = (span.route === undefined ? 0 : 8) | (span.draining ? 4 : 0) | (span.context.parentSpanId === '' ? 0 : 2) | (span.path === span.route ? 1 : 0)
  return ((span.statusCode ?? 0) * 2 + scheme) * 16 + flags
}

/** A server span's constant fields: name, kind, method, scheme, route, status, the drain, error, flags (and its path when it is the route). */
function serverConstants (w: ProtobufWriter, span: ServerSpanRecord): void {
  const { method, route, statusCode } = span
  nameAndKind(w, route === undefined ? method : `${method} ${route}`, KIND_SERVER)
  stringAttribute(w, KEYS.method, method)
  if (span.path === route) stringAttribute(w, KEYS.path, span.path)
  stringAttribute(w, KEYS.scheme, span.scheme)
  if (route !== undefined) stringAttribute(w, KEYS.route, route)
  if (span.draining) w.raw(DRAINING)
  if (statusCode === undefined) {
    // The semantic conventions' error.type for a request the client gave up on.
    stringAttribute(w, KEYS.errorType, 'aborted')
  } else {
    intAttribute(w, KEYS.statusCode, statusCode)
    // Server spans: 5xx is an error, 4xx is the client's (the conventions' rule).
    if (statusCode >= 500) {
      stringAttribute(w, KEYS.errorType, String(statusCode))
      errorStatus(w)
    }
  }
  w.raw(SPAN_FLAGS)
  w.fixed32(span.context.parentSpanId === '' ? FLAGS_LOCAL_PARENT : FLAGS_REMOTE_PARENT)
}

/** The number that, with its template and outcome, says which constant block a chain span takes: node, attempt, hedge. */
function chainKind (span: ChainSpanRecord): number {
  return (span.node * 0x10000 + span.attempt) * 2 + (span.hedge ? 1 : 0)
}

/** A chain span's constant fields: name, kind, method, template, node, attempt, resends, hedge, outcome, error, flags. */
function chainConstants (w: ProtobufWriter, span: ChainSpanRecord): void {
  nameAndKind(w, `GET ${span.template}`, KIND_CLIENT)
  stringAttribute(w, KEYS.method, 'GET')
  stringAttribute(w, KEYS.template, span.template)
  intAttribute(w, KEYS.node, span.node)
  intAttribute(w, KEYS.attempt, span.attempt)
  // The conventions' count of resends: attempts on other nodes after the first.
  if (span.attempt > 1) intAttribute(w, KEYS.resendCount, span.attempt - 1)
  // A hedged read's second attempt, sent while the first was still waiting (docs/hedged-reads.md).
  if (span.hedge) w.raw(HEDGE)
  stringAttribute(w, KEYS.outcome, span.outcome)
  if (span.outcome !== 'ok') {
    stringAttribute(w, KEYS.errorType, span.outcome)
    errorStatus(w)
  }
  w.raw(SPAN_FLAGS)
  w.fixed32(FLAGS_LOCAL_PARENT)
}

export class OtlpTraceSerializer {
  readonly #writer = new ProtobufWriter()
  /** ResourceSpans.resource, whole. */
  readonly #resource: Uint8Array
  /** ScopeSpans.scope of each scope, whole. */
  readonly #serverScope: Uint8Array
  readonly #chainScope: Uint8Array
  readonly #constants: ConstantBlocks

  constructor (resource: Readonly<Record<string, string>>, scopeVersion: string, constantBlocks = CONSTANT_BLOCKS) {
    this.#constants = new ConstantBlocks(constantBlocks)
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

  #server (w: ProtobufWriter, span: ServerSpanRecord): void {
    const { context } = span
    w.byte(SCOPE_SPANS_SPANS)
    const message = w.begin(2)
    spanIdsAndTimes(w, context.spanId, context.parentSpanId, span, context)
    if (span.path !== span.route) stringAttribute(w, KEYS.path, span.path)
    stringAttribute(w, KEYS.requestId, span.requestId)
    w.raw(this.#constants.get(span.method, span.route ?? '', serverKind(span), span, serverConstants))
    w.end(message, 2)
  }

  #chain (w: ProtobufWriter, span: ChainSpanRecord): void {
    const { context } = span
    w.byte(SCOPE_SPANS_SPANS)
    const message = w.begin(2)
    spanIdsAndTimes(w, span.spanId, context.spanId, span, context)
    w.raw(this.#constants.get(span.template, span.outcome, chainKind(span), span, chainConstants))
    w.end(message, 2)
  }
}
