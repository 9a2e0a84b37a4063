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
