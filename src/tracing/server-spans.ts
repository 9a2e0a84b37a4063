import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, FastifyTypeProvider, HookHandlerDoneFunction, RawServerDefault } from 'fastify'
import { newSpanId, newTraceId } from './ids.js'
import type { Sampler } from './sampler.js'
import { ServerSpanRecord, SpanContext } from './span-records.js'
import type { SpanQueue } from './span-queue.js'
import { extractTraceParent } from './trace-context.js'

// One SERVER span per request, as the Go service had (tracer edge-api.server; /healthz not
// traced, /readyz traced), named and attributed by the current HTTP semantic conventions.
// The request's trace is resolved lazily, at its first chain exchange or at its response:
// traceparent read, ids drawn, sampled or not (sampler.ts). An unsampled request never makes
// a span object; a sampled one makes its record (span-records.ts) at its end. A request shed
// with 503 before either never gets one: it is counted (edge_api_shed_total), and the shed
// path stays as cheap as it was.
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
  /** Whether `reply` is a 503 load shedding sent (src/admission/shedding.ts): not traced. */
  readonly refused: (reply: FastifyReply) => boolean
  /** True from the drain latch on: the span says so (edge_api.draining). */
  readonly draining: () => boolean
}

/** One request's trace: when it started, and its context once one is needed (a ChainTrace to the chain client). */
export class RequestTrace {
  readonly request: FastifyRequest
  /** The route pattern; undefined when no route matched (404, 405). */
  readonly route: string | undefined
  readonly startTime = performance.now()
  /** Its ids and sampling decision, once resolved (ServerSpans.contextOf). */
  context: SpanContext | undefined
  ended = false

  constructor (request: FastifyRequest, route: string | undefined) {
    this.request = request
    this.route = route
  }
}

export class ServerSpans {
  readonly #sampler: Sampler
  readonly #queue: SpanQueue

  constructor (sampler: Sampler, queue: SpanQueue) {
    this.#sampler = sampler
    this.#queue = queue
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
      if (requestTrace !== null && !(requestTrace.context === undefined && hooks.refused(reply))) {
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

  /** The trace of `requestTrace`'s request, resolved now if need be (the parent of its chain spans); undefined after its end. */
  contextOf (requestTrace: RequestTrace): SpanContext | undefined {
    if (requestTrace.ended) return undefined
    return requestTrace.context ?? this.#resolve(requestTrace)
  }

  /** The caller's trace or a new one, and the sampler's decision: once per request, before any span. */
  #resolve (requestTrace: RequestTrace): SpanContext {
    const parent = extractTraceParent(requestTrace.request.headers)
    const traceId = parent?.traceId ?? newTraceId()
    const context = new SpanContext(traceId, newSpanId(), parent?.spanId ?? '', parent?.traceState ?? '', this.#sampler(parent, traceId))
    requestTrace.context = context
    return context
  }

  // Called once: onRequestAbort ends an abandoned request's span, and Fastify runs no
  // onResponse for it (test/tracing/server-spans.test.ts: a client that leaves).
  #end (requestTrace: RequestTrace, statusCode: number | undefined, draining: boolean): void {
    const context = requestTrace.context ?? this.#resolve(requestTrace)
    requestTrace.ended = true
    if (!context.sampled) return
    const { request } = requestTrace
    const query = request.url.indexOf('?')
    this.#queue.add(new ServerSpanRecord(context, request.method, requestTrace.route, query < 0 ? request.url : request.url.slice(0, query),
      request.protocol, request.id, requestTrace.startTime, performance.now(), statusCode, draining))
  }
}
