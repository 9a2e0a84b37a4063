import { maxHeaderSize, STATUS_CODES, type Server } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import { formatByteSize } from '../byte-size.js'
import { formatDuration } from '../duration.js'
import { CLIENT_ERROR_ROUTE, UNKNOWN_METHOD, UNMATCHED_ROUTE } from '../metrics/labels.js'
import type { RequestMetrics } from '../metrics/requests.js'
import { logAccess } from './access-log.js'
import type { Pipelining } from './pipelining.js'
import { clientRequestId, REQUEST_ID_HEADER, type RequestIds } from './request-id.js'
import type { ServerTimeouts } from './server-timeouts.js'

export interface ClientErrorsOptions {
  readonly log: FastifyBaseLogger
  readonly requestIds: RequestIds
  /** What each connection has in progress: a body that timed out belongs to one of its requests. */
  readonly pipelining: Pipelining
  readonly timeouts: ServerTimeouts
  readonly metrics?: RequestMetrics | undefined
}

/** A parse error as Node reports it: llhttp's code (HPE_*) and its fixed reason text. */
type ClientError = NodeJS.ErrnoException & { reason?: string }

/**
 * The requests Node refuses before any route runs: a malformed request (400), headers over
 * Node's limit (431), chunk extensions over it (413), headers or body not in within
 * headersTimeout / requestTimeout (408). Fastify's default answers them with its own
 * {"error","message","statusCode"} body, and nothing is logged or counted. Here each gets the
 * {"message"} envelope, `Connection: close` (the connection is closed: what follows on it
 * cannot be read), one access line and one metric sample, like every other answer.
 */
export class ClientErrors {
  readonly #options: ClientErrorsOptions
  // When each connection opened: a request Node could not read has no start of its own.
  readonly #opened = new WeakMap<Socket, number>()

  constructor (options: ClientErrorsOptions) {
    this.#options = options
  }

  /** Notes when each connection opens (the server Fastify built). */
  watch (server: Server): void {
    server.on('connection', (socket: Socket) => { this.#opened.set(socket, performance.now()) })
  }

  /** Fastify's clientErrorHandler: the server's 'clientError' event. */
  readonly answer = (err: ClientError, socket: Socket): void => {
    const status = statusOf(err)
    // A reset, a socket error or a socket already gone: the client left, nobody reads an answer.
    if (status === undefined || socket.destroyed) {
      socket.destroy()
      return
    }
    const { log, requestIds, pipelining, timeouts, metrics } = this.#options
    const unanswered = pipelining.unanswered(socket)
    // Headers in, body not (a timeout, a malformed chunk): the refusal answers that request.
    const last = unanswered.at(-1)
    const reply = last !== undefined && !last.request.raw.complete ? last : undefined
    const message = status === 408
      ? reply === undefined
        ? `request headers not received within ${formatDuration(timeouts.headersTimeout)}`
        : `request not received in full within ${formatDuration(timeouts.requestTimeout)}`
      : status === 431
        ? `request headers larger than ${formatByteSize(maxHeaderSize)}`
        : status === 413
          ? 'chunk extensions too large'
          : `malformed HTTP request: ${err.reason as string}`
    const id = reply === undefined ? requestIds.next() : clientRequestId(reply.request.headers) ?? reply.request.id
    // Never into the middle of an answer already going out on this connection (pipelining).
    if (socket.writable && !unanswered.some(answering)) {
      const body = JSON.stringify({ message })
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] as string}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n${REQUEST_ID_HEADER}: ${id}\r\nconnection: close\r\n\r\n${body}`)
    }
    socket.destroy()
    if (reply === undefined) {
      // No request to time: the time since its connection opened.
      const ms = performance.now() - (this.#opened.get(socket) as number)
      answered(log.child({ reqId: id }), null, null, status, ms, message)
      metrics?.requestAnswered(UNKNOWN_METHOD, CLIENT_ERROR_ROUTE, status, ms / 1000)
    } else {
      const { request } = reply
      const route = request.routeOptions.url
      answered(request.log, request.method, route ?? null, status, reply.elapsedTime, message)
      metrics?.requestAnswered(request.method, route ?? UNMATCHED_ROUTE, status, reply.elapsedTime / 1000)
    }
  }
}

/**
 * Node's one refusal that does not go through 'clientError': an HTTP/1.1 request without
 * Host (RFC 9112 §3.2 requires 400) gets an empty 400 written directly, unlogged. With Node's
 * check off (`requireHostHeader: false`, app.ts), the request's onRequest (request-lifecycle.ts)
 * asks this, and answers with refuseMissingHost as a route would.
 */
export function hasRequiredHost (request: FastifyRequest): boolean {
  return request.headers.host !== undefined || request.raw.httpVersion !== '1.1'
}

/** The 400 of an HTTP/1.1 request without Host, in the envelope. */
export function refuseMissingHost (reply: FastifyReply): void {
  reply.code(400).send({ message: 'missing Host header (required in HTTP/1.1)' })
}

/** The status Node's own answer would have had; undefined when the connection failed rather than the request. */
function statusOf (err: ClientError): number | undefined {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408
  if (err.code === 'HPE_HEADER_OVERFLOW') return 431
  if (err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return 413
  return err.code?.startsWith('HPE_') === true ? 400 : undefined
}

/** As handleError logs every client error: the reason at debug, then the access line at info. */
function answered (log: FastifyBaseLogger, method: string | null, route: string | null, status: number, ms: number, reason: string): void {
  log.debug({ statusCode: status, reason }, 'request refused by Node')
  logAccess(log, method, route, status, ms)
}

function answering (reply: FastifyReply): boolean {
  return reply.raw.headersSent && !reply.raw.writableEnded
}
