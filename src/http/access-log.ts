import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

export interface AccessLogOptions {
  /** Responses to leave out (requests shed under load are counted and summarised instead). */
  readonly skip?: (reply: FastifyReply) => boolean
}

/**
 * One line per answered request, at info, written when the response has gone out: method,
 * route pattern (not the URL: bounded cardinality, no addresses or ids), status, duration in
 * ms; the request id comes from the request's child logger (`reqId`). It replaces Fastify's
 * two default lines ("incoming request", "request completed"), which cost twice as much and
 * say less.
 */
export function accessLog (options: AccessLogOptions = {}) {
  const skip = options.skip
  // A callback hook: no promise per request.
  return function logAccess (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    if (skip?.(reply) !== true) {
      request.log.info({
        method: request.method,
        // Unmatched requests (404, router errors) have no pattern.
        route: request.routeOptions.url ?? null,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        // How a cacheable answer was served (hit, coalesced, miss, revalidated); absent otherwise.
        cache: reply.getHeader('x-cache')
      }, 'request')
    }
    done()
  }
}

/**
 * At debug, also a line as each request arrives, before any work is done: what was in
 * progress when something goes wrong, or which replica holds a given request id.
 */
export function logArrival (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  request.log.debug({ method: request.method, url: request.url }, 'incoming request')
  done()
}
