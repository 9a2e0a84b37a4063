import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { BLOCK_HEIGHT_HEADER } from '../cache/conditional.js'
import type { VerifiedCursor } from '../light/cursor.js'
import { VERIFICATION_HEADER } from '../proven/verification-header.js'

// X-Verified-Height (docs/verified-reads.md): a latest-state answer (one that says its
// X-Block-Height) also says V, the newest height this replica's light client has verified,
// so a client sees how far the answer's height is from what is proven. Not sent while V is
// unknown, nor with verification off (no hook at all then). The same answers also say what
// they are when the mode gives every answer of their route one X-Verification
// (src/proven/proven-answers.ts, routeVerification): `headers-only` in headers mode, `route`
// for the routes that are not proven in answers mode; a proven route's answer says its own.

export const VERIFIED_HEIGHT_HEADER = 'x-verified-height'

type OnSend = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) => void

/**
 * The onRoute hook that gives each route, last among its onSend hooks, the one adding
 * X-Verified-Height: the answer cache sets X-Block-Height in the route's own onSend
 * (src/cache/http-cache.ts), which runs after every app-wide one. `verificationOf`: the
 * X-Verification value of a route's answers, when its mode gives them all one.
 */
export function verifiedHeight (cursor: VerifiedCursor, verificationOf: (url: string) => string | undefined): (route: RouteOptions) => void {
  return (route) => {
    const verification = verificationOf(route.url)
    const onSend: OnSend = (_request, reply, payload, done) => {
      const verified = cursor.height
      const read = reply.hasHeader(BLOCK_HEIGHT_HEADER)
      if (verified !== undefined && read) reply.header(VERIFIED_HEIGHT_HEADER, String(verified))
      if (verification !== undefined && read) reply.header(VERIFICATION_HEADER, verification)
      done(null, payload)
    }
    route.onSend = [...[route.onSend ?? []].flat(), onSend as never]
  }
}
