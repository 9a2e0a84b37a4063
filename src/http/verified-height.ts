import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { BLOCK_HEIGHT_HEADER } from '../cache/conditional.js'
import type { VerifiedCursor } from '../light/cursor.js'
import { VERIFICATION_HEADER } from '../proven/verification-header.js'

// X-Verified-Height (docs/verified-reads.md): a latest-state answer (one that says its
// X-Block-Height) also says V, the newest height this replica's light client has verified,
// so a client sees how far the answer's height is from what is proven. Not sent while V is
// unknown, nor with verification off (no hook at all then). With EDGE_API_VERIFICATION=headers
// the same answers also say what they are not: X-Verification `unverified; reason="headers-only"`
// (src/proven/answer-policy.ts), since that mode proves no answer.

export const VERIFIED_HEIGHT_HEADER = 'x-verified-height'

type OnSend = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) => void

/**
 * The onRoute hook that gives each route, last among its onSend hooks, the one adding
 * X-Verified-Height: the answer cache sets X-Block-Height in the route's own onSend
 * (src/cache/http-cache.ts), which runs after every app-wide one. `verification`: the
 * X-Verification value of those answers, when the mode gives every answer one.
 */
export function verifiedHeight (cursor: VerifiedCursor, verification?: string): (route: RouteOptions) => void {
  const onSend: OnSend = (_request, reply, payload, done) => {
    const verified = cursor.height
    const read = reply.hasHeader(BLOCK_HEIGHT_HEADER)
    if (verified !== undefined && read) reply.header(VERIFIED_HEIGHT_HEADER, String(verified))
    if (verification !== undefined && read) reply.header(VERIFICATION_HEADER, verification)
    done(null, payload)
  }
  return (route) => {
    route.onSend = [...[route.onSend ?? []].flat(), onSend as never]
  }
}
