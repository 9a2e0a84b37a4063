import type { FastifyBaseLogger } from 'fastify'
import type { IncomingHttpHeaders } from 'node:http'
import type { Bindings, ChildLoggerOptions } from 'pino'
import { clientRequestId } from './request-id.js'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
// pino's level methods, overloads aside: each call passes its arguments on as they came.
type LogCalls = Record<Level, (...args: unknown[]) => void>

/**
 * A request's logger (request.log, reply.log), whose pino child is made only when something
 * logs through it. Fastify makes one per request; most requests never write a line below info,
 * and a pino child costs its bindings' serialization up front (about 2% of serving
 * /v1/status at warn, docs/performance.md). The child is the one Fastify's own factory would
 * make, with the caller's well-formed X-Request-Id as clientReqId beside our reqId. It offers
 * what Fastify's logger interface (FastifyBaseLogger) has: the level methods, `level` and
 * `child`.
 */
export class RequestLogger {
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions
  readonly #headers: IncomingHttpHeaders
  #made: FastifyBaseLogger | undefined

  constructor (parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions, headers: IncomingHttpHeaders) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
    this.#headers = headers
  }

  get #calls (): LogCalls {
    return this.#logger as unknown as LogCalls
  }

  get #logger (): FastifyBaseLogger {
    if (this.#made === undefined) {
      const clientReqId = clientRequestId(this.#headers)
      this.#made = this.#parent.child(clientReqId === undefined ? this.#bindings : { ...this.#bindings, clientReqId }, this.#options)
    }
    return this.#made
  }

  get level (): string {
    return this.#logger.level
  }

  set level (level: string) {
    this.#logger.level = level
  }

  fatal (...args: unknown[]): void {
    this.#calls.fatal(...args)
  }

  error (...args: unknown[]): void {
    this.#calls.error(...args)
  }

  warn (...args: unknown[]): void {
    this.#calls.warn(...args)
  }

  info (...args: unknown[]): void {
    this.#calls.info(...args)
  }

  debug (...args: unknown[]): void {
    this.#calls.debug(...args)
  }

  trace (...args: unknown[]): void {
    this.#calls.trace(...args)
  }

  silent (): void {}

  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger.child(bindings, options)
  }
}
