import type { IncomingHttpHeaders } from 'node:http'

/** The header a request id arrives in (from the router, or a client) and is echoed back in. */
export const REQUEST_ID_HEADER = 'x-request-id'

// What an incoming id may look like to be kept: the router's (`unique-id-format`, e.g.
// 7F000001:C350_7F000001:4A38_6931A2B0_0001:1A2B) and the usual UUIDs and tokens fit.
const WELL_FORMED = /^[\w.:-]{1,64}$/

/**
 * Our own request ids, r1, r2, … in base 36: unique within one app, never taken from a
 * request. A client's id is kept beside ours (`clientReqId`), never instead of it: adopted
 * verbatim, `X-Request-Id: r1` would pass for the r1 of another request. One sequence per
 * app, so two apps in one process (tests, the bench) never share one.
 */
export class RequestIds {
  #counter = 0

  next (): string {
    return `r${(++this.#counter).toString(36)}`
  }
}

/** The request's own well-formed `X-Request-Id` (the router's, or the caller's), or undefined. */
export function clientRequestId (headers: IncomingHttpHeaders): string | undefined {
  const id = headers[REQUEST_ID_HEADER]
  return typeof id === 'string' && WELL_FORMED.test(id) ? id : undefined
}
