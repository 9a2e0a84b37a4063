import type { ChainOutcome } from '../chain/client.js'

// What the exporter sends of each sampled span: plain records, fields only, written to OTLP
// protobuf by otlp-serializer.ts. A request's spans share its SpanContext.

/** A request's trace: its ids and its sampling decision, made once (server-spans.ts) before any span. */
export class SpanContext {
  /** 32 hex digits: the caller's trace, or a new one. */
  readonly traceId: string
  /** The request's server span: 16 hex digits. */
  readonly spanId: string
  /** The caller's span (traceparent); '' for a new trace. */
  readonly parentSpanId: string
  /** The caller's tracestate, cleaned; '' without one. */
  readonly traceState: string
  readonly sampled: boolean
  /**
   * The wall clock (Date.now()) and the monotonic clock (performance.now()) read together
   * when the trace was resolved: a span's times are its monotonic readings from there, added
   * to the wall clock. So they follow the wall clock however long the process runs (the
   * monotonic clock alone, from performance.timeOrigin, drifts from it: the SDK's fix of
   * 2022), and a request's spans keep their order and sub-millisecond durations.
   */
  readonly wallClockMs: number
  readonly monotonicMs: number

  constructor (traceId: string, spanId: string, parentSpanId: string, traceState: string, sampled: boolean,
    wallClockMs = Date.now(), monotonicMs = performance.now()) {
    this.traceId = traceId
    this.spanId = spanId
    this.parentSpanId = parentSpanId
    this.traceState = traceState
    this.sampled = sampled
    this.wallClockMs = wallClockMs
    this.monotonicMs = monotonicMs
  }
}

/** A SERVER span (scope edge-api.server): one request, by the HTTP semantic conventions. */
export class ServerSpanRecord {
  readonly context: SpanContext
  readonly method: string
  /** The route pattern; undefined when no route matched (404, 405). */
  readonly route: string | undefined
  /** The path without its query string. */
  readonly path: string
  readonly scheme: string
  readonly requestId: string
  /** performance.now() at its start and its end (the serializer makes them wall-clock times: SpanContext). */
  readonly startMs: number
  readonly endMs: number
  /** The status sent; undefined when the client left before its answer (error.type aborted). */
  readonly statusCode: number | undefined
  /** Answered after the drain latch (edge_api.draining). */
  readonly draining: boolean

  constructor (context: SpanContext, method: string, route: string | undefined, path: string, scheme: string, requestId: string,
    startMs: number, endMs: number, statusCode: number | undefined, draining: boolean) {
    this.context = context
    this.method = method
    this.route = route
    this.path = path
    this.scheme = scheme
    this.requestId = requestId
    this.startMs = startMs
    this.endMs = endMs
    this.statusCode = statusCode
    this.draining = draining
  }
}

/** A CLIENT span (scope edge-api.chain): one exchange with a chain node, child of its request's server span. */
export class ChainSpanRecord {
  /** Its request's: the trace, and the server span that is its parent. */
  readonly context: SpanContext
  readonly spanId: string
  /** The chain path's template (path-template.ts): url.template and the span's name. */
  readonly template: string
  /** The node's 1-based position in CHAIN_REST_URL, never its URL. */
  readonly node: number
  /** 1 for the first try; more under failover. */
  readonly attempt: number
  /** A hedged read's second attempt. */
  readonly hedge: boolean
  readonly startMs: number
  endMs = 0
  /** Set at its end. */
  outcome: ChainOutcome = 'ok'

  constructor (context: SpanContext, spanId: string, template: string, node: number, attempt: number, hedge: boolean, startMs: number) {
    this.context = context
    this.spanId = spanId
    this.template = template
    this.node = node
    this.attempt = attempt
    this.hedge = hedge
    this.startMs = startMs
  }
}

export type SpanRecord = ServerSpanRecord | ChainSpanRecord
