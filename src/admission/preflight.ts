import type { FastifyRequest } from 'fastify'

// Admission's one exception for browsers (CORS itself is src/http/cors.ts): a preflight is
// never refused by a policy, so that the page's real request reads the refusal.

/**
 * Whether `request` is a browser's preflight (OPTIONS with Access-Control-Request-Method). A
 * preflight is answered 204 whatever the route's fate (blocked, the client limited, fair share,
 * shedding: those hooks let it through, and /v1's admission never sees an OPTIONS): refused,
 * the browser shows the page only "Failed to fetch", never the 403 or the 429 and its
 * Retry-After that the real request then reads. It costs no chain read and no route's work.
 */
export function isPreflight (request: FastifyRequest): boolean {
  return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined
}
