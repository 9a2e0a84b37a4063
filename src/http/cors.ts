import type { FastifyCorsOptions } from '@fastify/cors'
import type { FastifyReply, FastifyRequest } from 'fastify'

// CORS for browser pages on other origins (EDGE_API_CORS_ORIGINS): the public read-only
// answers, never with credentials (no cookie or authorization is ever read, so a page gains
// nothing a server-side client lacks). For any origin (`*`), two fixed headers
// (anyOriginHeaders); for a list, @fastify/cors adds Access-Control-Allow-Origin and Vary:
// Origin, and the headers a page may read. Its own preflight answer is off:
// it registers `OPTIONS *`, answers any path 204 (an unknown one too) and a plain OPTIONS
// without Origin 400, where the Go service's router answers 204 with Allow on a known path
// and 404 elsewhere. Its `OPTIONS *` route hands every OPTIONS request to the not-found
// handler (methods.ts), which answers as Go does and adds the preflight headers here; with `*`
// no route has OPTIONS, and every OPTIONS request reaches that handler by itself.

/** The response headers a page may read: the height, the verified one and what is verified, the cache's, the limit's, and the wait a long-poll was given. */
export const EXPOSED_HEADERS = ['X-Block-Height', 'X-Verified-Height', 'X-Verification', 'ETag', 'X-Cache', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'X-Request-Id', 'Preference-Applied']

/** How long a browser may keep a preflight answer: the routes' methods never change while a replica runs. */
export const PREFLIGHT_MAX_AGE_S = 86_400

/**
 * The CORS headers of every answer when any origin may read (`*`, the default): what
 * @fastify/cors sends for `*`, fixed for the replica's life, so each request only sets them
 * (request-lifecycle.ts) where the plugin spread its options, read the route's options twice
 * and joined the exposed list on every request. No Vary: the answer is the same for every Origin.
 */
export function anyOriginHeaders (): Readonly<Record<string, string>> {
  return {
    'access-control-allow-origin': '*',
    'access-control-expose-headers': EXPOSED_HEADERS.join(', ')
  }
}

/** @fastify/cors's options for a list of origins: its headers on every answer (errors and refusals included, so a page can read them). */
export function corsOptions (origins: readonly string[]): FastifyCorsOptions {
  return {
    origin: [...origins],
    credentials: false,
    exposedHeaders: EXPOSED_HEADERS,
    preflight: false
  }
}

/**
 * On an OPTIONS answer for a known path: when it is a preflight from an allowed origin (the
 * hook above set Access-Control-Allow-Origin), the methods and request headers allowed.
 */
export function addPreflightHeaders (request: FastifyRequest, reply: FastifyReply, methods: readonly string[]): void {
  if (request.headers['access-control-request-method'] === undefined || !reply.hasHeader('access-control-allow-origin')) return
  reply.header('access-control-allow-methods', methods.join(', '))
  const headers = request.headers['access-control-request-headers']
  if (headers !== undefined) {
    const vary = reply.getHeader('vary')
    reply.header('access-control-allow-headers', headers)
    reply.header('vary', vary === undefined ? 'Access-Control-Request-Headers' : `${String(vary)}, Access-Control-Request-Headers`)
  }
  reply.header('access-control-max-age', String(PREFLIGHT_MAX_AGE_S))
}
