import type { FastifyBaseLogger, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { NO_CLIENT } from '../fair-queue.js'
import { clientOf } from '../admission/client-identity.js'
import { clientRequestId } from './request-id.js'

export interface AccessLogOptions {
  /** The app's root logger: the line carries the request's ids itself, no child logger is made for it. */
  readonly log: FastifyBaseLogger
  /** Responses to leave out (requests shed under load are counted and summarised instead). */
  readonly skip?: (reply: FastifyReply) => boolean
}

/** Writes one request's access line; `route` is its pattern (null when no route matched). */
export type AccessLine = (request: FastifyRequest, reply: FastifyReply, route: string | null) => void

/**
 * One line per answered request, at info, written when the response has gone out (the
 * lifecycle's onResponse, request-lifecycle.ts): method, route pattern (not the URL: bounded
 * cardinality, no addresses or ids), status, duration in ms, the client, and the request's ids
 * as every line of the request has them (`reqId`, and `clientReqId` when its X-Request-Id is
 * well-formed). Written through the root logger: a pino child per line (what request.log makes
 * on its first line) cost about a tenth of a request's CPU at info. It replaces Fastify's two
 * default lines ("incoming request", "request completed"), which cost twice as much and say less.
 */
export function accessLog (options: AccessLogOptions): AccessLine {
  const { log, skip } = options
  return (request, reply, route) => {
    if (skip?.(reply) === true) return
    // The fields a request's child logger puts first (request-logger.ts), then the line's own.
    log.info({
      reqId: request.id,
      clientReqId: clientRequestId(request.headers),
      method: request.method,
      route,
      status: reply.statusCode,
      ms: roundedMs(reply.elapsedTime),
      cache: reply.getHeader('x-cache') as string | undefined,
      client: admittedClient(request) ?? clientOf(request)
    }, 'request')
  }
}

/**
 * The access line itself, also written for the requests Node refuses before Fastify sees
 * them (src/http/client-errors.ts), which have no method or route.
 */
export function logAccess (log: FastifyBaseLogger, method: string | null, route: string | null, status: number, ms: number, cache?: string, client?: string): void {
  // cache: how a cacheable answer was served (hit, coalesced, miss, revalidated); absent otherwise.
  // client: who asked (client-identity.ts: an address, or an IPv6 /64).
  log.info({ method, route, status, ms: roundedMs(ms), cache, client }, 'request')
}

/**
 * At debug, also a line as each request arrives, before any work is done: what was in
 * progress when something goes wrong, or which replica holds a given request id.
 */
export function logArrival (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  request.log.debug({ method: request.method, url: request.url }, 'incoming request')
  done()
}

/**
 * The client fair admission named when it let the request in (an admitted /v1 request,
 * src/cache/read-context.ts): not worked out twice (an IPv6 /64 costs ~2.6 µs). Undefined for
 * a request it did not admit, or outside /v1 (where requests have no readClient).
 */
function admittedClient (request: FastifyRequest): string | undefined {
  const client = request.readClient as string | undefined
  return client === undefined || client === NO_CLIENT ? undefined : client
}

/** Milliseconds to two decimals: enough for an access line, and short. */
function roundedMs (ms: number): number {
  return Math.round(ms * 100) / 100
}
