// The errors a client can see. Anything that is not an HttpError becomes
// 500 {"message":"Internal Server Error"}: no stack, URL or address leaves the process.

export class HttpError extends Error {
  readonly statusCode: number
  readonly headers: Readonly<Record<string, string>>

  constructor (statusCode: number, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.name = 'HttpError'
    this.statusCode = statusCode
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

/** The chain answered with a gateway error: its gRPC code and message are passed on. */
export class ChainStatusError extends HttpError {
  readonly grpcCode: number

  constructor (grpcCode: number, message: string) {
    super(HTTP_STATUS_OF_GRPC[grpcCode] ?? 500, message)
    this.name = 'ChainStatusError'
    this.grpcCode = grpcCode
  }
}

/** The chain could not be reached (refused, reset, closed, shutting down). `cause` has the detail for the log. */
export class ChainUnavailableError extends HttpError {
  constructor (cause: unknown) {
    super(503, 'chain unavailable')
    this.name = 'ChainUnavailableError'
    this.cause = cause
  }
}

export class ChainTimeoutError extends HttpError {
  constructor (timeoutMs: number) {
    super(504, 'chain query timed out')
    this.name = 'ChainTimeoutError'
    this.cause = `no answer within ${timeoutMs}ms`
  }
}

/** The bounded queue of chain requests is full: shed instead of growing without limit. */
export class ChainBusyError extends HttpError {
  constructor () {
    super(503, 'too many chain queries in progress; retry shortly', { 'retry-after': '1' })
    this.name = 'ChainBusyError'
  }
}

/**
 * The chain answered more than EDGE_API_CHAIN_MAX_RESPONSE bytes. Bad gateway: the answer
 * was cut off, its memory released and its connection closed (never reused).
 */
export class ChainAnswerTooLargeError extends HttpError {
  readonly code = 'CHAIN_ANSWER_TOO_LARGE'

  constructor (maxBytes: number, detail: string) {
    super(502, 'chain answer too large')
    this.name = 'ChainAnswerTooLargeError'
    this.cause = `${detail}: over the limit of ${maxBytes} bytes (EDGE_API_CHAIN_MAX_RESPONSE)`
  }
}

/** The chain answered 2xx with a body that is not JSON. Bad gateway; the detail is the cause (the log's). */
export class ChainBadAnswerError extends HttpError {
  readonly code = 'CHAIN_BAD_ANSWER'

  constructor (detail: string) {
    super(502, 'chain answer is not JSON')
    this.name = 'ChainBadAnswerError'
    this.cause = detail
  }
}
