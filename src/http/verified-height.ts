import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { BLOCK_HEIGHT_HEADER } from '../cache/conditional.js'
import type { VerifiedCursor } from '../light/cursor.js'

// X-Verified-Height (docs/verified-reads.md): a latest-state answer (one that says its
// X-Block-Height) also says V, the newest height this replica's light client has verified,
// so a client sees how far the answer's height is from what is proven. Not sent while V is
// unknown, nor with verification off (no hook at all then).

export const VERIFIED_HEIGHT_HEADER = 'x-verified-height'

type OnSend = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) => void

/**
 * The onRoute hook that gives each route, last among its onSend hooks, the one adding
 * X-Verified-Height: the answer cache sets X-Block-Height in the route's own onSend
 * (src/cache/http-cache.ts), which runs after every app-wide one.
 */
export function verifiedHeight (cursor: VerifiedCursor): (route: RouteOptions) => void {
  const onSend: OnSend = (_request, reply, payload, done) => {
    const verified = cursor.height
    if (verified !== undefined && reply.hasHeader(BLOCK_HEIGHT_HEADER)) reply.header(VERIFIED_HEIGHT_HEADER, String(verified))
    done(null, payload)
  }
  return (route) => {
    route.onSend = [...[route.onSend ?? []].flat(), onSend as never]
  }
}
