// The HTTP server's timeouts, set deliberately rather than inherited, and passed where
// Fastify 5 forwards them. Fastify sets keepAliveTimeout and requestTimeout on the server
// itself (its top-level options; its own requestTimeout default, 0, would overwrite Node's);
// Node's other server options reach http.createServer only through Fastify's `http: {...}`
// (a top-level headersTimeout is silently ignored: the server kept Node's 60 s).

export interface ServerTimeouts {
  /**
   * An idle keep-alive socket must outlive the peer's own idle timeout (HAProxy `timeout
   * http-keep-alive 10s`, nginx/ALB 60 s); if we closed first, the peer could write a request
   * onto a socket we are closing and its client would see a 502. It never delays shutdown: from
   * the drain latch on every response carries Connection: close, and idle sockets are closed
   * when the listener closes (fastify/fastify#7044).
   */
  readonly keepAliveTimeout: number
  /** A client (or slowloris) gets this long to send its headers; the router sends them at once. */
  readonly headersTimeout: number
  /**
   * The whole request must have arrived by then (Node requires it to be >= headersTimeout;
   * our requests have no body). It does not bound handling time: the chain timeout and the
   * shutdown budget do.
   */
  readonly requestTimeout: number
  /**
   * How often Node checks headersTimeout and requestTimeout (30 s by default, so a 15 s
   * headersTimeout could hold a dripping client for 45 s): both take effect within this much
   * of expiring. A timer per server walking the open connections, cheap at this rate.
   */
  readonly connectionsCheckingInterval: number
}

export const SERVER_TIMEOUTS: ServerTimeouts = {
  keepAliveTimeout: 75_000,
  headersTimeout: 15_000,
  requestTimeout: 30_000,
  connectionsCheckingInterval: 500
}

/** Fastify options that put `overrides` (tests shorten them) over SERVER_TIMEOUTS into effect. */
export function serverTimeoutOptions (overrides: Partial<ServerTimeouts> = {}) {
  const { keepAliveTimeout, headersTimeout, requestTimeout, connectionsCheckingInterval } = { ...SERVER_TIMEOUTS, ...overrides }
  return {
    keepAliveTimeout,
    requestTimeout,
    // requestTimeout here too: http.createServer checks it against headersTimeout.
    http: { headersTimeout, requestTimeout, connectionsCheckingInterval }
  }
}
