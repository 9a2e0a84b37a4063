import type { FastifyReply, FastifyRequest } from 'fastify'
import { REAL_CLOCK, type Clock } from '../clock.js'
import { formatDuration } from '../duration.js'
import type { RateLimit } from '../edge-settings.js'
import type { RateCounter, Take } from '../shared/rate-counter.js'
import { LocalRateCounter } from './local-rate-counter.js'
import { prepareRefusal, REFUSALS, refusalMessage } from './refusals.js'
import { refuseStream, wantsStream } from './stream-refusal.js'

// EDGE_API_RATE_LIMIT: a token bucket per client (clientOf), counted across the pool when a
// store is there (src/shared/rate-counter.ts) and by this replica otherwise. The store is never
// what decides whether a request is served: a command past its deadline of a few ms, or a
// store down, is counted here instead (one log line when that starts, one when the pool has
// answered every count for POOL_AGAIN_MS: a store that hovers at its deadline is one line, not
// a pair per miss; the store's operations metric counts each). Every limited answer carries the
// IETF fields as draft-ietf-httpapi-ratelimit-headers-10 defines them: the policy (q quota
// units over w seconds, w at least 1) and the quota left (r, exact) with t, the seconds until
// more quota is available (one more token), on a success and a refusal alike; a refusal is 429
// with Retry-After, the same t.

/** The pool must answer every count for this long before the line that it counts again (hysteresis). */
export const POOL_AGAIN_MS = 10_000

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
  /** What POOL_AGAIN_MS is timed on. @default REAL_CLOCK */
  readonly clock?: Clock
}

/** Routes never limited: the router's and the orchestrator's checks. Metrics have a listener of their own. */
const UNLIMITED = new Set(['/healthz', '/readyz'])

export class RateLimiter {
  readonly #interval: number
  readonly #tolerance: number
  readonly #policy: string
  readonly #message: string
  readonly #pool: RateCounter | undefined
  readonly #local: LocalRateCounter
  readonly #log: RateLimitLog
  readonly #onRefused: (() => void) | undefined
  readonly #clock: Clock
  #alone = false
  /** Since when (clock ms) the pool has answered every count, while counted alone; undefined: since the last miss. */
  #answeringSince: number | undefined
  /** Counts this replica made alone since the line that said so. */
  #countedAlone = 0

  constructor (options: RateLimiterOptions) {
    const { requests, windowMs, burst } = options.limit
    this.#interval = windowMs / requests
    this.#tolerance = this.#interval * burst
    this.#policy = policyField(this.#interval, burst, this.#tolerance)
    this.#message = refusalMessage(REFUSALS.rateLimit, `${requests} requests per ${formatDuration(windowMs)}`)
    this.#pool = options.pool
    this.#local = options.local ?? new LocalRateCounter()
    this.#log = options.log
    this.#onRefused = options.onRefused
    this.#clock = options.clock ?? REAL_CLOCK
  }

  /**
   * Admission's step 3 (admit.ts): the limit's fields on the answer, and true; or, for a client
   * over it, its 429 (a stream's refusal for an event stream) sent, and false.
   */
  async check (request: FastifyRequest, reply: FastifyReply, client: string): Promise<boolean> {
    if (UNLIMITED.has(request.routeOptions.url as string)) return true
    const take = await this.#take(client)
    reply.header('ratelimit-policy', this.#policy)
    const seconds = Math.max(1, Math.ceil(take.moreMs / 1000))
    reply.header('ratelimit', `"default";r=${take.remaining};t=${seconds}`)
    if (take.taken) return true
    this.#onRefused?.()
    // An event stream's refusal is one an EventSource comes back from (stream-refusal.ts): a 429 would end it for good.
    if (wantsStream(request)) refuseStream(reply, seconds, this.#message)
    else reply.send(prepareRefusal(reply, REFUSALS.rateLimit, this.#message, seconds))
    return false
  }

  async #take (client: string): Promise<Take> {
    if (this.#pool !== undefined) {
      const take = await this.#pool.take(client, this.#interval, this.#tolerance)
      this.#countAlone(take === undefined)
      if (take !== undefined) return take
    }
    return this.#local.takeNow(client, this.#interval, this.#tolerance)
  }

  /** One line when the pool stops answering in time, one when it has answered every count for POOL_AGAIN_MS since. */
  #countAlone (alone: boolean): void {
    if (alone) {
      this.#answeringSince = undefined
      this.#countedAlone++
      if (this.#alone) return
      this.#alone = true
      this.#log.warn({}, 'rate limit counted by this replica alone: the shared store did not answer in time')
      return
    }
    if (!this.#alone) return
    const now = this.#clock.now()
    this.#answeringSince ??= now
    if (now - this.#answeringSince < POOL_AGAIN_MS) return
    this.#log.info({ countedAlone: this.#countedAlone }, 'rate limit counted across the pool again')
    this.#alone = false
    this.#countedAlone = 0
  }
}

/**
 * RateLimit-Policy: the bucket (q, its burst) and the seconds it takes to fill (w). A bucket
 * that fills in under a second (600/1m burst=1: 0.1 s) is said as the requests it lets
 * through a second (q=10;w=1): draft-10's w is a whole number of seconds, at least 1.
 */
function policyField (intervalMs: number, burst: number, toleranceMs: number): string {
  if (toleranceMs >= 1000) return `"default";q=${burst};w=${Math.round(toleranceMs / 1000)}`
  return `"default";q=${Math.floor(1000 / intervalMs)};w=1`
}
