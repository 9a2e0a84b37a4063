import { BinaryWriter } from '@bufbuild/protobuf/wire'
import {
  boolAttribute, encoded, errorStatus, FLAGS_LOCAL_PARENT, FLAGS_REMOTE_PARENT, intAttribute, keyField, KIND_CLIENT, KIND_SERVER,
  nameAndKind, REQUEST_RESOURCE_SPANS, RESOURCE_ATTRIBUTES, RESOURCE_SPANS_RESOURCE, RESOURCE_SPANS_SCOPE_SPANS, SCOPE_NAME,
  SCOPE_SPANS_SCOPE, SCOPE_SPANS_SPANS, SCOPE_VERSION, SPAN_FLAGS, spanIdsAndTimes, stringAttribute
} from './otlp-fields.js'
import { ChainSpanRecord, ServerSpanRecord, type SpanRecord } from './span-records.js'

// An OTLP ExportTraceServiceRequest (opentelemetry/proto/collector/trace/v1/trace_service.proto
// and trace/v1/trace.proto) written straight from our span records, in one pass, with
// @bufbuild/protobuf's BinaryWriter: one ResourceSpans, with a ScopeSpans for edge-api.server
// and one for edge-api.chain. What never changes is encoded once: the resource, the scopes,
// the attribute keys, and each kind of span's constant fields (ConstantBlocks), so a span
// costs its ids, times and an id or two (otlp-fields.ts writes each field). exporter.ts sends it.
// test/tracing/otlp-serializer.test.ts decodes it with the receiver's independent reader.

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
  get<Span> (a: string, b: string, n: number | undefined, span: Span, encode: (w: BinaryWriter, span: Span) => void): Uint8Array {
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
function serverConstants (w: BinaryWriter, span: ServerSpanRecord): void {
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
  w.uint32(SPAN_FLAGS).fixed32(span.context.parentSpanId === '' ? FLAGS_LOCAL_PARENT : FLAGS_REMOTE_PARENT)
}

/** The number that, with its template and outcome, says which constant block a chain span takes: node, attempt, hedge. */
function chainKind (span: ChainSpanRecord): number {
  return (span.node * 0x10000 + span.attempt) * 2 + (span.hedge ? 1 : 0)
}

/** A chain span's constant fields: name, kind, method, template, node, attempt, resends, hedge, outcome, error, flags. */
function chainConstants (w: BinaryWriter, span: ChainSpanRecord): void {
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
  // An attempt the read no longer needed (the other of a hedged pair answered first) did not fail: no error.
  if (span.outcome !== 'ok' && span.outcome !== 'abandoned') {
    stringAttribute(w, KEYS.errorType, span.outcome)
    errorStatus(w)
  }
  w.uint32(SPAN_FLAGS).fixed32(FLAGS_LOCAL_PARENT)
}

export class OtlpTraceSerializer {
  /** One writer for every export: finish() hands over its bytes and leaves it empty. */
  readonly #writer = new BinaryWriter()
  /** ResourceSpans.resource, whole. */
  readonly #resource: Uint8Array
  /** ScopeSpans.scope of each scope, whole. */
  readonly #serverScope: Uint8Array
  readonly #chainScope: Uint8Array
  readonly #constants: ConstantBlocks

  constructor (resource: Readonly<Record<string, string>>, scopeVersion: string, constantBlocks = CONSTANT_BLOCKS) {
    this.#constants = new ConstantBlocks(constantBlocks)
    this.#resource = encoded((w) => {
      w.uint32(RESOURCE_SPANS_RESOURCE).fork()
      for (const [key, value] of Object.entries(resource)) stringAttribute(w, keyField(key), value, RESOURCE_ATTRIBUTES)
      w.join()
    })
    const scope = (name: string): Uint8Array => encoded((w) => {
      w.uint32(SCOPE_SPANS_SCOPE).fork().uint32(SCOPE_NAME).string(name).uint32(SCOPE_VERSION).string(scopeVersion).join()
    })
    this.#serverScope = scope('edge-api.server')
    this.#chainScope = scope('edge-api.chain')
  }

  /** The export request of `spans`; undefined for none (nothing is sent then). */
  serializeRequest (spans: readonly SpanRecord[]): Uint8Array | undefined {
    if (spans.length === 0) return undefined
    const w = this.#writer
    w.uint32(REQUEST_RESOURCE_SPANS).fork()
    w.raw(this.#resource)
    let server = 0
    for (const span of spans) if (span instanceof ServerSpanRecord) server++
    if (server > 0) {
      w.uint32(RESOURCE_SPANS_SCOPE_SPANS).fork()
      w.raw(this.#serverScope)
      for (const span of spans) if (span instanceof ServerSpanRecord) this.#server(w, span)
      w.join()
    }
    if (server < spans.length) {
      w.uint32(RESOURCE_SPANS_SCOPE_SPANS).fork()
      w.raw(this.#chainScope)
      for (const span of spans) if (span instanceof ChainSpanRecord) this.#chain(w, span)
      w.join()
    }
    w.join()
    return w.finish()
  }

  #server (w: BinaryWriter, span: ServerSpanRecord): void {
    const { context } = span
    w.uint32(SCOPE_SPANS_SPANS).fork()
    spanIdsAndTimes(w, context.spanId, context.parentSpanId, span, context)
    if (span.path !== span.route) stringAttribute(w, KEYS.path, span.path)
    stringAttribute(w, KEYS.requestId, span.requestId)
    w.raw(this.#constants.get(span.method, span.route ?? '', serverKind(span), span, serverConstants))
    w.join()
  }

  #chain (w: BinaryWriter, span: ChainSpanRecord): void {
    const { context } = span
    w.uint32(SCOPE_SPANS_SPANS).fork()
    spanIdsAndTimes(w, span.spanId, context.spanId, span, context)
    w.raw(this.#constants.get(span.template, span.outcome, chainKind(span), span, chainConstants))
    w.join()
  }
}
