// The error catalog: every error edge-api raises on purpose, each class with a stable `code`
// (as undici's UND_ERR_*), so logs and tests name the kind of failure rather than its text.
// Anything that is not an HttpError becomes 500 {"message":"Internal Server Error"}: no
// stack, URL or address leaves the process. A `cause` is the detail for the log.

import { NamedError } from './named-error.js'

/** An answer for the client: its status, a client-safe message and any headers. */
export class HttpError extends NamedError {
  readonly code: string = 'EDGE_ERR_HTTP'
  readonly statusCode: number
  readonly headers: Readonly<Record<string, string>>

  constructor (statusCode: number, message: string, headers: Record<string, string> = {}, cause?: unknown) {
    super(message)
    this.statusCode = statusCode
    // Assigned, not passed to Error: the log's serializer writes only enumerable fields.
    if (cause !== undefined) this.cause = cause
    this.headers = headers
  }
}

export function badRequest (message: string): HttpError {
  return new HttpError(400, message)
}

export function notFound (message: string): HttpError {
  return new HttpError(404, message)
}

/** gRPC status codes the gateway reports in its error body {"code", "message"}. */
export const GrpcCode = {
  InvalidArgument: 3,
  NotFound: 5,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  Unavailable: 14,
  Unauthenticated: 16
} as const

const HTTP_STATUS_OF_GRPC: Readonly<Record<number, number>> = {
  [GrpcCode.NotFound]: 404,
  [GrpcCode.InvalidArgument]: 400,
  [GrpcCode.Unauthenticated]: 401,
  [GrpcCode.PermissionDenied]: 403,
  [GrpcCode.ResourceExhausted]: 429,
  [GrpcCode.Unavailable]: 503
}

/**
 * The chain answered with a gateway error: its gRPC code and message are passed on (and
 * `headers`: a rate-limiting node's Retry-After).
 */
export class ChainStatusError extends HttpError {
  override readonly code = 'EDGE_ERR_CHAIN_STATUS'
  readonly grpcCode: number

  constructor (grpcCode: number, message: string, headers: Record<string, string> = {}) {
    super(HTTP_STATUS_OF_GRPC[grpcCode] ?? 500, message, headers)
    this.grpcCode = grpcCode
  }
}

/**
 * A gateway error answered the Go service's way for some routes (docs/routes.md): 500 with
 * the route's own message, whatever the gRPC code. The chain's error is the cause.
 */
export class ChainQueryError extends HttpError {
  override readonly code = 'EDGE_ERR_CHAIN_QUERY'
  /** The gRPC code the chain answered, for a route that treats one of them as an answer. */
  readonly grpcCode: number

  constructor (message: string, cause: ChainStatusError) {
    super(500, message, {}, cause)
    this.grpcCode = cause.grpcCode
  }
}

/**
 * Runs a chain query whose gateway errors become ChainQueryError(500, message(err)) instead
 * of being mapped by gRPC code. Transport failures keep their own 503/504, which say more
 * to a client deciding whether to retry.
 */
export async function legacyChainQuery<T> (query: Promise<T>, message: (err: ChainStatusError) => string): Promise<T> {
  try {
    return await query
  } catch (err) {
    if (err instanceof ChainStatusError) throw new ChainQueryError(message(err), err)
    throw err
  }
}

/** The chain could not be reached (refused, reset, closed, shutting down). `cause` has the detail for the log. */
export class ChainUnavailableError extends HttpError {
  override readonly code = 'EDGE_ERR_CHAIN_UNAVAILABLE'

  constructor (cause: unknown) {
    super(503, 'chain unavailable', {}, cause)
  }
}

export class ChainTimeoutError extends HttpError {
  override readonly code = 'EDGE_ERR_CHAIN_TIMEOUT'

  constructor (timeoutMs: number) {
    super(504, 'chain query timed out', {}, `no answer within ${timeoutMs}ms`)
  }
}

/**
 * No chain node could serve the height asked: every one is behind it, lagging, or has pruned
 * it. The nodes' failure, never the client's (a 4xx would tell the client to stop asking).
 */
export class ChainHeightUnavailableError extends HttpError {
  override readonly code = 'EDGE_ERR_CHAIN_HEIGHT_UNAVAILABLE'

  constructor (detail: string) {
    super(503, 'no chain node can serve this block height now; retry shortly', { 'retry-after': '1' }, detail)
  }
}

/**
 * A client's minimum height (X-Min-Block-Height, src/cache/min-height.ts) that no chain node of
 * this replica reached within the wait: retryable, here or on another replica.
 */
export class MinHeightUnavailableError extends HttpError {
  override readonly code = 'EDGE_ERR_MIN_HEIGHT_UNAVAILABLE'

  /** `why` completes "no chain node of this replica has reached block N": "within 2000 ms", … */
  constructor (minimum: number, best: number, why: string) {
    super(503, `no chain node of this replica has reached block ${minimum} (X-Min-Block-Height) ${why}; its highest is ${best}; retry shortly`, { 'retry-after': '1' })
  }
}

/**
 * A queue is full and this request's client has more waiting in it than the others (the fair
 * queue, src/fair-queue.ts): the client's excess, answered 429 as a fair-share refusal.
 */
export class OverShareError extends NamedError {
  readonly code = 'EDGE_ERR_OVER_SHARE'

  constructor () {
    super('this client has more waiting than its share of a full queue')
  }
}

/** The bounded queue of chain requests is full: shed instead of growing without limit. */
export class ChainBusyError extends HttpError {
  override readonly code = 'EDGE_ERR_CHAIN_BUSY'

  constructor () {
    super(503, 'too many chain queries in progress; retry shortly', { 'retry-after': '1' })
  }
}

/**
 * The chain answered more than EDGE_API_CHAIN_MAX_RESPONSE bytes. Bad gateway: the answer
 * was cut off, its memory released and its connection closed (never reused).
 */
export class ChainAnswerTooLargeError extends HttpError {
  override readonly code = 'EDGE_ERR_CHAIN_ANSWER_TOO_LARGE'

  constructor (maxBytes: number, detail: string) {
    super(502, 'chain answer too large', {}, `${detail}: over the limit of ${maxBytes} bytes (EDGE_API_CHAIN_MAX_RESPONSE)`)
  }
}

/** The chain answered 2xx with a body that is not JSON. Bad gateway; the detail is the cause (the log's). */
export class ChainBadAnswerError extends HttpError {
  override readonly code = 'EDGE_ERR_CHAIN_BAD_ANSWER'

  constructor (detail: string) {
    super(502, 'chain answer is not JSON', {}, detail)
  }
}

/** A setting that refuses to boot; the message names the variable, the value and what is allowed. */
export class ConfigError extends NamedError {
  readonly code = 'EDGE_ERR_CONFIG'
  /** The environment variable at fault, e.g. EDGE_API_PORT. */
  readonly variable: string

  constructor (variable: string, message: string) {
    super(message)
    this.variable = variable
  }
}

/** The server could not listen on the configured address; the message says why, `cause` is Node's error. */
export class ListenError extends NamedError {
  readonly code = 'EDGE_ERR_LISTEN'
  readonly host: string
  readonly port: number
  /** Node's own code for the failure, e.g. EADDRINUSE. */
  readonly reason: string | undefined

  /** `listener` names a listener other than the public one (the metrics'), first in the message. */
  constructor (host: string, port: number, cause: NodeJS.ErrnoException, listener?: string) {
    super((listener === undefined ? '' : `${listener}: `) + (cause.code === 'EADDRINUSE'
      ? `port ${port} on ${host} is already in use`
      : `cannot listen on ${host}:${port}: ${cause.message}`))
    this.host = host
    this.port = port
    this.reason = cause.code
    this.cause = cause
  }
}
