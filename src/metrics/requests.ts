import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ServerResponse } from 'node:http'
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
 * One answered request's duration, by method, route pattern (`route`, its pattern: never the
 * URL, whose values are unbounded; undefined when no route matched) and status. The request's
 * lifecycle (src/http/request-lifecycle.ts) calls it from its onResponse, and counts requests
 * in flight from its onRequest to its response's 'close'. Shed requests are counted by the
 * app's Shedding, which reports each refusal to `shed` (app.ts).
 */
export function timeAnswer (metrics: RequestMetrics, request: FastifyRequest, reply: FastifyReply, route: string | undefined): void {
  if (!UNTIMED.has(reply.raw)) metrics.requestAnswered(request.method, route ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000)
}
