import type { FastifyBaseLogger, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { clientOf } from '../admission/client-identity.js'

export interface AccessLogOptions {
  /** Responses to leave out (requests shed under load are counted and summarised instead). */
  readonly skip?: (reply: FastifyReply) => boolean
}

/**
 * One line per answered request, at info, written when the response has gone out: method,
 * route pattern (not the URL: bounded cardinality, no addresses or ids), status, duration in
 * ms, the client; the request id comes from the request's child logger (`reqId`). It replaces Fastify's
 * two default lines ("incoming request", "request completed"), which cost twice as much and
 * say less.
 */
export function accessLog (options: AccessLogOptions = {}) {
  const skip = options.skip
  // A callback hook: no promise per request.
  return function onResponse (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    // Unmatched requests (404, router errors) have no pattern.
    if (skip?.(reply) !== true) logAccess(request.log, request.method, request.routeOptions.url ?? null, reply.statusCode, reply.elapsedTime, reply.getHeader('x-cache') as string | undefined, clientOf(request))
    done()
  }
}

/**
 * The access line itself, also written for the requests Node refuses before Fastify sees
 * them (src/http/client-errors.ts), which have no method or route.
 */
export function logAccess (log: FastifyBaseLogger, method: string | null, route: string | null, status: number, ms: number, cache?: string, client?: string): void {
  // cache: how a cacheable answer was served (hit, coalesced, miss, revalidated); absent otherwise.
  // client: who asked (client-identity.ts: an address, or an IPv6 /64).
  log.info({ method, route, status, ms: Math.round(ms * 100) / 100, cache, client }, 'request')
}

/**
 * At debug, also a line as each request arrives, before any work is done: what was in
 * progress when something goes wrong, or which replica holds a given request id.
 */
export function logArrival (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  request.log.debug({ method: request.method, url: request.url }, 'incoming request')
  done()
}
