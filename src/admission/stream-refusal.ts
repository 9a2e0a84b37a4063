import type { FastifyReply, FastifyRequest } from 'fastify'

// A refusal a browser's EventSource can act on (docs/waiting.md): an EventSource gives up for
// good on any status but 200 (a 429 or 503 ends it, readyState CLOSED), while a 200
// text/event-stream that ends is reconnected after its retry:. So a stream refused by a cap (or
// a limit, or a blocked route) is answered 200 with the wait as its retry:, a comment saying
// why, and Retry-After for clients that read it, then ended: the browser comes back then.

/** Whether `request` asks for an event stream: its refusals must be stream-shaped (refuseStream). */
export function wantsStream (request: FastifyRequest): boolean {
  const accept = request.headers.accept
  return request.method === 'GET' && accept !== undefined && accept.includes('text/event-stream')
}

/**
 * Answers a refused stream request: 200 text/event-stream, `retry:` of `retryAfterS`, a
 * comment with `reason`, ended. Call it instead of sending the 429/503 when wantsStream(request).
 */
export function refuseStream (reply: FastifyReply, retryAfterS: number, reason: string): FastifyReply {
  const comment = reason.replaceAll(/[\r\n]+/g, ' ')
  return reply
    .code(200)
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('retry-after', String(retryAfterS))
    .send(`: ${comment}\nretry: ${retryAfterS * 1000}\n\n`)
}
