import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, FastifyTypeProvider, RawServerDefault } from 'fastify'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { UNMATCHED_ROUTE } from './labels.js'
import type { Metrics } from './registry.js'

/** What the request hooks report to (Metrics). */
export type RequestMetrics = Pick<Metrics, 'requestStarted' | 'requestEnded' | 'requestAnswered' | 'shed' | 'refused' | 'waiting'>

/** Responses not timed in http_request_duration_seconds: see untimed. */
const UNTIMED = new WeakSet<ServerResponse>()

/**
 * A held long-poll or an event stream: its length is its wait (or its client's stay), not what
 * it cost, so it is not timed in http_request_duration_seconds (the slow-p99 alert reads it:
 * two long-polls among 100 reads put a route's p99 over 2.5 s). waiting.ts times it instead.
 */
export function untimed (reply: FastifyReply): void {
  UNTIMED.add(reply.raw)
}

/**
 * Request metrics on the public app: in flight and duration by route pattern. Hooks on the
 * root instance, so they see every route, 404s and 405s, and /v1's shed requests
 * (admission's hook runs after these). Shed requests are counted by the app's
 * Shedding, which reports each refusal to `shed` (app.ts).
 */
export function instrumentRequests<Logger extends FastifyBaseLogger, Provider extends FastifyTypeProvider> (
  app: FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger, Provider>,
  metrics: RequestMetrics
): void {
  // 'close' always comes, answered or not: Fastify's onResponse does not run for a request
  // whose client went away first, and the gauge must not count it forever (Pipelining closes
  // the answers Node leaves queued on a closed connection). Once: Node may close one of those
  // too. One shared listener, no closure per request.
  function ended (this: ServerResponse): void {
    metrics.requestEnded()
  }
  app.addHook('onRequest', (_request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    metrics.requestStarted()
    reply.raw.once('close', ended)
    done()
  })
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    // The route's pattern (/v1/epochs/:epoch), never the URL: its values are unbounded.
    if (!UNTIMED.has(reply.raw)) metrics.requestAnswered(request.method, request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
}
