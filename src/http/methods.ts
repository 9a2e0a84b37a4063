import type { FastifyReply, FastifyRequest } from 'fastify'
import { addPreflightHeaders } from './cors.js'
import { handleNotFound } from './error-handler.js'

// A known path asked with a method it does not have, answered as the Go service's router
// (Echo v4.15.1, edge-api/go.mod@89ff8bdb; labstack/echo router.go Find; Echo's default
// error handler, zpoken/gonka edge-api/internal/server/server.go@89ff8bdb sets no other): 405
// with `Allow` and {"message":"Method Not Allowed"}, and OPTIONS 204 with `Allow`. Echo lists
// OPTIONS first, then the path's methods in its fixed order. Fastify also serves HEAD for
// every GET route (exposeHeadRoutes, on by default), which Echo v4 did not, so HEAD is in
// our Allow and HEAD requests get the GET route's headers instead of Go's 405.
//
// Done once, in the not-found handler: the router is asked which methods exist for the URL,
// so every route, present and future, gets it without registering anything per route.

const METHODS = ['CONNECT', 'DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'TRACE'] as const

/** The methods the app routes for `url` (its path; any query is ignored), in Echo's order. */
export function routedMethods (request: FastifyRequest, url: string): string[] {
  const path = url.split('?', 1)[0] as string
  return METHODS.filter((method) => request.server.findRoute({ method, url: path }) !== null)
}

/** The not-found handler: 405 or 204 for a known path, else the 404 envelope. */
export function handleUnrouted (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const methods = routedMethods(request, request.url)
  if (methods.length === 0) return handleNotFound(request, reply)
  reply.header('allow', ['OPTIONS', ...methods].join(', '))
  if (request.method === 'OPTIONS') {
    // A browser's preflight (CORS on: cors.ts) is answered here too, with what Allow says.
    addPreflightHeaders(request, reply, methods)
    return reply.code(204).send()
  }
  return reply.code(405).send({ message: 'Method Not Allowed' })
}
