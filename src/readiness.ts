import { NODE_INFO_PATH } from './chain/client.js'
import { ChainStatusError, ChainTimeoutError, ChainUnavailableError } from './errors.js'
import { formatDuration } from './duration.js'

/** What GET /readyz answers; the exact bodies of SPEC §4. */
export type ReadinessAnswer =
  | { readonly status: 'ready' }
  | { readonly status: 'not ready', readonly reason: 'draining' }
  | { readonly status: 'not ready', readonly reason: 'chain unreachable', readonly error: string }

/** The one thing readiness needs from the chain client (ChainClient.probe). */
export interface ChainProber {
  probe (path: string, timeoutMs: number): Promise<unknown>
}

export interface ReadinessOptions {
  /** The probe's own budget. Below the router's `timeout check 3s`, so a slow chain is not a dead one. @default 2000 */
  readonly probeTimeoutMs?: number
  /** How long a probe's result, failure included, answers every check. @default 3000 */
  readonly cacheMs?: number
  /** Monotonic milliseconds; injected by tests. @default performance.now */
  readonly now?: () => number
}

/** What the probe reads: a cheap query any healthy node answers. */
export const PROBE_PATH = NODE_INFO_PATH

const READY: ReadinessAnswer = { status: 'ready' }
const DRAINING: ReadinessAnswer = { status: 'not ready', reason: 'draining' }

/**
 * Readiness: a cached, single-flight chain probe plus the one-way drain latch.
 *
 * The probe runs under its own budget and never under the caller's signal: a health checker
 * that hangs up must not cancel it, or the cancellation would be cached as "chain unreachable"
 * for every check in the next cache period (the Go service's first bug). Concurrent checks
 * share one probe, and its result, failure included, is cached, so a check every second from
 * every balancer costs at most one chain request per cache period per replica.
 */
export class Readiness {
  readonly #chain: ChainProber
  readonly #probeTimeoutMs: number
  readonly #cacheMs: number
  readonly #now: () => number
  #draining = false
  #cached: { readonly answer: ReadinessAnswer, readonly at: number } | undefined
  #inFlight: Promise<ReadinessAnswer> | undefined

  constructor (chain: ChainProber, options: ReadinessOptions = {}) {
    this.#chain = chain
    this.#probeTimeoutMs = options.probeTimeoutMs ?? 2000
    this.#cacheMs = options.cacheMs ?? 3000
    this.#now = options.now ?? (() => performance.now())
  }

  /** True once the drain latch is set; it is never unset. */
  get draining (): boolean {
    return this.#draining
  }

  /** Sets the one-way latch: from now on every check answers draining. */
  beginDrain (): void {
    this.#draining = true
  }

  /**
   * The answer for one check. The latch is read before the probe (a draining replica costs
   * the chain nothing) and again after it: a drain that began while the probe was in flight
   * wins, even over a probe that succeeded.
   */
  async check (): Promise<ReadinessAnswer> {
    if (this.#draining) return DRAINING
    const answer = await this.#probeOnce()
    if (this.#draining) return DRAINING
    return answer
  }

  #probeOnce (): Promise<ReadinessAnswer> {
    const cached = this.#cached
    if (cached !== undefined && this.#now() - cached.at < this.#cacheMs) return Promise.resolve(cached.answer)
    if (this.#inFlight !== undefined) return this.#inFlight
    const probe = this.#probe()
    this.#inFlight = probe
    return probe
  }

  async #probe (): Promise<ReadinessAnswer> {
    let answer: ReadinessAnswer
    try {
      await this.#chain.probe(PROBE_PATH, this.#probeTimeoutMs)
      answer = READY
    } catch (err) {
      answer = { status: 'not ready', reason: 'chain unreachable', error: this.#describe(err) }
    }
    // Cached from when the answer arrived, as the Go service does: a slow probe still
    // spares the chain for a whole cache period afterwards.
    this.#cached = { answer, at: this.#now() }
    this.#inFlight = undefined
    return answer
  }

  /** A client-safe reason: never an internal URL, address or stack (those stay in the chain client's errors). */
  #describe (err: unknown): string {
    if (err instanceof ChainTimeoutError) return `no answer within ${formatDuration(this.#probeTimeoutMs)}`
    if (err instanceof ChainStatusError) return `chain answered gRPC code ${err.grpcCode}: ${err.message}`
    if (err instanceof ChainUnavailableError) return 'chain unavailable'
    if (err instanceof SyntaxError) return 'chain answered with a body that is not JSON'
    return 'chain probe failed'
  }
}
