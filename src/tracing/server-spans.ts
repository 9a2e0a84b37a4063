import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type TextMapPropagator, type Tracer } from '@opentelemetry/api'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, FastifyTypeProvider, HookHandlerDoneFunction, RawServerDefault } from 'fastify'

// One SERVER span per request, as the Go service had (tracer edge-api.server; /healthz not
// traced, /readyz traced), named and attributed by the current HTTP semantic conventions.
// The span is made lazily: at the request's first chain exchange (its parent) or at its
// response. A request shed with 503 before either never gets one: it is counted
// (edge_api_shed_total), and the shed path stays as cheap as it was.
// The request's trace travels explicitly, as request.otelTrace: src/cache/http-cache.ts gives
// it to the request's chain readers, which hand it to each exchange (ChainTracer.exchange).
// No AsyncLocalStorage: on Node 20 it turns on async hooks for every promise of the process.

/** Routes the Go service did not trace: the liveness probe, every second per replica. */
const UNTRACED_ROUTES = new Set(['/healthz'])

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's trace (src/tracing/server-spans.ts): absent with tracing off, null on an untraced route; what its chain reads carry (ChainTrace). */
    otelTrace?: RequestTrace | null
  }
}

/** The app, whatever its logger and type provider. */
export type TracedApp<Logger extends FastifyBaseLogger, Provider extends FastifyTypeProvider> =
  FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger, Provider>

/** What a request's trace needs to know of the app. */
export interface ServerSpanHooks {
  /** Whether `reply` is a 503 load shedding sent (src/http/shedding.ts): not traced. */
  readonly refused: (reply: FastifyReply) => boolean
  /** True from the drain latch on: the span says so (edge_api.draining). */
  readonly draining: () => boolean
}

/** One request's trace: when it started, and its span once one is needed (a ChainTrace to the chain client). */
export class RequestTrace {
  readonly request: FastifyRequest
  /** The route pattern; undefined when no route matched (404, 405). */
  readonly route: string | undefined
  readonly startTime = performance.now()
  span: Span | undefined
  /** The trace context it came with (traceparent), once its span is made. */
  parent: Context | undefined
  /** Its span's context, once a chain exchange asks for it. */
  context: Context | undefined
  ended = false

  constructor (request: FastifyRequest, route: string | undefined) {
    this.request = request
    this.route = route
  }
}

export class ServerSpans {
  readonly #tracer: Tracer
  readonly #propagator: TextMapPropagator

  constructor (tracer: Tracer, propagator: TextMapPropagator) {
    this.#tracer = tracer
    this.#propagator = propagator
  }

  /** Adds the hooks to `app`: first among its onRequest hooks, so the span starts when the request does. */
  register<Logger extends FastifyBaseLogger, Provider extends FastifyTypeProvider> (app: TracedApp<Logger, Provider>, hooks: ServerSpanHooks): void {
    app.decorateRequest('otelTrace', null)
    app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
      // routeOptions is a getter that builds an object: read once.
      const route = request.routeOptions.url
      if (route !== undefined && UNTRACED_ROUTES.has(route)) {
        done()
        return
      }
      request.otelTrace = new RequestTrace(request, route)
      done()
    })
    app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const requestTrace = request.otelTrace as RequestTrace | null
      if (requestTrace !== null && !(requestTrace.span === undefined && hooks.refused(reply))) {
        this.#end(requestTrace, reply.statusCode, hooks.draining())
      }
      done()
    })
    // A client that leaves before its answer gets no onResponse: its span ends here, or never reaches the collector.
    app.addHook('onRequestAbort', (request: FastifyRequest, done: HookHandlerDoneFunction) => {
      const requestTrace = request.otelTrace as RequestTrace | null
      if (requestTrace !== null) this.#end(requestTrace, undefined, hooks.draining())
      done()
    })
  }

  /** The context of `requestTrace`'s request, the parent of its chain spans (its span made now if need be); undefined after its end. */
  contextOf (requestTrace: RequestTrace): Context | undefined {
    if (requestTrace.ended) return undefined
    const span = this.#span(requestTrace)
    // #span set the parent.
    requestTrace.context ??= trace.setSpan(requestTrace.parent as Context, span)
    return requestTrace.context
  }

  /** The request's span, made now if need be; its context only when a chain exchange asks for it (contextOf). */
  #span (requestTrace: RequestTrace): Span {
    if (requestTrace.span !== undefined) return requestTrace.span
    const { request, route } = requestTrace
    // Node's headers are lower-cased already, as the propagator asks for them (a repeated one it
    // takes as an array).
    const parent = this.#propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter)
    requestTrace.parent = parent
    // No attributes at the start: the SDK sanitizes those twice (before sampling, and again
    // for the span), and an unsampled span never needs them; our samplers do not read them.
    const span = this.#tracer.startSpan(route === undefined ? request.method : `${request.method} ${route}`, {
      kind: SpanKind.SERVER,
      startTime: requestTrace.startTime
    }, parent)
    requestTrace.span = span
    if (span.isRecording()) {
      const query = request.url.indexOf('?')
      const attributes: Attributes = {
        'http.request.method': request.method,
        'url.path': query < 0 ? request.url : request.url.slice(0, query),
        'url.scheme': request.protocol,
        'edge_api.request_id': request.id
      }
      if (route !== undefined) attributes['http.route'] = route
      span.setAttributes(attributes)
    }
    return span
  }

  // Called once: onRequestAbort ends an abandoned request's span, and Fastify runs no
  // onResponse for it (test/tracing/server-spans.test.ts: a client that leaves).
  #end (requestTrace: RequestTrace, statusCode: number | undefined, draining: boolean): void {
    const span = this.#span(requestTrace)
    requestTrace.ended = true
    if (!span.isRecording()) return
    if (draining) span.setAttribute('edge_api.draining', true)
    if (statusCode === undefined) {
      // The semantic conventions' error.type for a request the client gave up on.
      span.setAttribute('error.type', 'aborted')
    } else {
      span.setAttribute('http.response.status_code', statusCode)
      // Server spans: 5xx is an error, 4xx is the client's (the conventions' rule).
      if (statusCode >= 500) {
        span.setAttribute('error.type', String(statusCode))
        span.setStatus({ code: SpanStatusCode.ERROR })
      }
    }
    // On the clock of its start: a span given its start time would end at Date.now(), to the millisecond.
    span.end(performance.now())
  }
}
