import type { FastifyReply, FastifyRequest } from 'fastify'
import { formatDuration } from '../duration.js'
import type { RateLimit } from '../edge-settings.js'
import type { RateCounter, Take } from '../shared/rate-counter.js'
import { clientOf } from './client-identity.js'
import { isPreflight } from './cors.js'
import { LocalRateCounter } from './local-rate-counter.js'

// EDGE_API_RATE_LIMIT: a token bucket per client (clientOf), counted across the pool when a
// store is there (src/shared/rate-counter.ts) and by this replica otherwise. The store is never
// what decides whether a request is served: a command past its deadline of a few ms, or a
// store down, is counted here instead (one log line when that starts and when it ends; the
// store's operations metric counts each). Every limited answer carries the IETF fields
// (draft-ietf-httpapi-ratelimit-headers-10): the policy (q tokens, w the seconds a bucket
// takes to fill) and what is left (r tokens, t seconds until the bucket is full); a refusal is
// 429 with Retry-After, the seconds until one more token.

export interface RateLimitLog {
  info (fields: object, message: string): void
  warn (fields: object, message: string): void
}

export interface RateLimiterOptions {
  readonly limit: RateLimit
  /** The pool's counter (EDGE_API_REDIS_URL); undefined: this replica counts alone. */
  readonly pool?: RateCounter | undefined
  /** This replica's own counter. @default a LocalRateCounter on the real clock */
  readonly local?: LocalRateCounter
  readonly log: RateLimitLog
  /** Told of every 429 (edge_api_refusals_total{reason="rate_limit"}). */
  readonly onRefused?: (() => void) | undefined
}

/** Routes never limited: the router's and the orchestrator's checks. Metrics have a listener of their own. */
const UNLIMITED = new Set(['/healthz', '/readyz'])

export class RateLimiter {
  readonly #interval: number
  readonly #tolerance: number
  readonly #policy: string
  readonly #body: string
  readonly #pool: RateCounter | undefined
  readonly #local: LocalRateCounter
  readonly #log: RateLimitLog
  readonly #onRefused: (() => void) | undefined
  #alone = false

  constructor (options: RateLimiterOptions) {
    const { requests, windowMs, burst } = options.limit
    this.#interval = windowMs / requests
    this.#tolerance = this.#interval * burst
    this.#policy = `"default";q=${burst};w=${Math.round(this.#tolerance / 1000)}`
    this.#body = JSON.stringify({ message: `Too Many Requests: this client is over its limit of ${requests} requests per ${formatDuration(windowMs)}` })
    this.#pool = options.pool
    this.#local = options.local ?? new LocalRateCounter()
    this.#log = options.log
    this.#onRefused = options.onRefused
  }

  /** The onRequest hook: the limit's fields on the answer, or a 429 for a client over it. */
  readonly limit = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    // A preflight is neither counted nor refused (cors.ts: isPreflight): the page's real request is.
    if (UNLIMITED.has(request.routeOptions.url as string) || isPreflight(request)) return undefined
    const take = await this.#take(clientOf(request))
    reply.header('ratelimit-policy', this.#policy)
    if (take.taken) {
      const remaining = Math.floor((this.#tolerance - take.ms) / this.#interval)
      reply.header('ratelimit', `"default";r=${remaining};t=${Math.ceil(take.ms / 1000)}`)
      return undefined
    }
    const seconds = Math.max(1, Math.ceil(take.ms / 1000))
    this.#onRefused?.()
    reply.code(429).header('retry-after', String(seconds)).header('ratelimit', `"default";r=0;t=${seconds}`)
      .header('content-type', 'application/json; charset=utf-8')
    return reply.send(this.#body)
  }

  async #take (client: string): Promise<Take> {
    if (this.#pool !== undefined) {
      const take = await this.#pool.take(client, this.#interval, this.#tolerance)
      this.#countAlone(take === undefined)
      if (take !== undefined) return take
    }
    return this.#local.takeNow(client, this.#interval, this.#tolerance)
  }

  #countAlone (alone: boolean): void {
    if (alone === this.#alone) return
    this.#alone = alone
    if (alone) this.#log.warn({}, 'rate limit counted by this replica alone: the shared store did not answer in time')
    else this.#log.info({}, 'rate limit counted across the pool again')
  }
}
