import { NODE_INFO_PATH } from './chain/paths.js'
import { REAL_CLOCK, type Clock } from './clock.js'
import { chainOutcome, type ChainOutcome } from './chain/types.js'
import { ChainAnswerTooLargeError, ChainBadAnswerError, ChainStatusError, ChainTimeoutError, ChainUnavailableError } from './errors.js'
import { formatDuration } from './duration.js'

/** What GET /readyz answers: the exact bodies of docs/readiness-and-drain.md. */
export type ReadinessAnswer =
  | { readonly status: 'ready' }
  | { readonly status: 'not ready', readonly reason: 'draining' }
  | { readonly status: 'not ready', readonly reason: 'chain unreachable', readonly error: string }
  | { readonly status: 'not ready', readonly reason: 'not verified', readonly error: string }

/** The one thing readiness needs from the chain client (ChainClient.probe, ChainClient.nodeCount). */
export interface ChainProber {
  /** How many chain nodes there are; each is probed on its own. @default 1 */
  readonly nodeCount?: number
  probe (path: string, timeoutMs: number, node: number): Promise<unknown>
}

export interface ReadinessOptions {
  /** The probe's own budget. Below the router's `timeout check 3s`, so a slow chain is not a dead one. @default 2000 */
  readonly probeTimeoutMs?: number
  /** How long a probe's result, failure included, answers every check. @default 3000 */
  readonly cacheMs?: number
  /** What a cached answer's age is read on. @default REAL_CLOCK */
  readonly clock?: Clock
  /** Told each probe's result (not the cached answers): 'ok' or how it failed. @default none */
  readonly onProbe?: (result: ChainOutcome) => void
  /** EDGE_API_VERIFICATION=strict: why the replica's verified height does not do (src/light/freshness.ts), undefined when it does. @default none */
  readonly unverified?: (() => string | undefined) | undefined
}

/** What the probe reads: a cheap query any healthy node answers. */
export const PROBE_PATH = NODE_INFO_PATH

const READY: ReadinessAnswer = { status: 'ready' }
const DRAINING: ReadinessAnswer = { status: 'not ready', reason: 'draining' }

/**
 * Readiness: a cached, single-flight chain probe per chain node plus the one-way drain latch.
 * Ready while at least one node answers its probe.
 *
 * The probe runs under its own budget and never under the caller's signal: a health checker
 * that hangs up must not cancel it, or the cancellation would be cached as "chain unreachable"
 * for every check in the next cache period (the Go service's first bug). Concurrent checks
 * share one probe per node, and its result, failure included, is cached, so a check every
 * second from every balancer costs at most one request per node per cache period per replica.
 */
export class Readiness {
  readonly #nodes: NodeProbe[]
  readonly #unverified: () => string | undefined
  #draining = false

  constructor (chain: ChainProber, options: ReadinessOptions = {}) {
    const settings = {
      probeTimeoutMs: options.probeTimeoutMs ?? 2000,
      cacheMs: options.cacheMs ?? 3000,
      clock: options.clock ?? REAL_CLOCK,
      onProbe: options.onProbe ?? (() => {})
    }
    this.#nodes = Array.from({ length: chain.nodeCount ?? 1 }, (_, node) => new NodeProbe(chain, node, settings))
    this.#unverified = options.unverified ?? (() => undefined)
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
    // Strict mode: a replica that cannot vouch for its answers takes no traffic, whatever its nodes answer.
    const unverified = this.#unverified()
    if (unverified !== undefined) return { status: 'not ready', reason: 'not verified', error: unverified }
    const answer = await this.#anyNodeReady()
    if (this.#draining) return DRAINING
    return answer
  }

  /** Ready as soon as one node's probe is; not ready once every node's probe has failed. */
  #anyNodeReady (): Promise<ReadinessAnswer> {
    if (this.#nodes.length === 1) return (this.#nodes[0] as NodeProbe).answer()
    return new Promise((resolve) => {
      const failures: string[] = []
      let left = this.#nodes.length
      this.#nodes.forEach((node, i) => {
        node.answer().then((answer) => {
          if (answer.status === 'ready') resolve(READY)
          // The node's number, never its URL: the reason is shown to whoever asks.
          else failures[i] = `node ${i + 1}: ${(answer as { error: string }).error}`
          if (--left === 0) resolve({ status: 'not ready', reason: 'chain unreachable', error: failures.join('; ') })
        })
      })
    })
  }
}

/** One node's probe: single-flight, its result (failure included) cached for a while. */
class NodeProbe {
  readonly #chain: ChainProber
  readonly #node: number
  readonly #probeTimeoutMs: number
  readonly #cacheMs: number
  readonly #clock: Clock
  readonly #onProbe: (result: ChainOutcome) => void
  #cached: { readonly answer: ReadinessAnswer, readonly at: number } | undefined
  #inFlight: Promise<ReadinessAnswer> | undefined

  constructor (chain: ChainProber, node: number, settings: { probeTimeoutMs: number, cacheMs: number, clock: Clock, onProbe: (result: ChainOutcome) => void }) {
    this.#chain = chain
    this.#node = node
    this.#probeTimeoutMs = settings.probeTimeoutMs
    this.#cacheMs = settings.cacheMs
    this.#clock = settings.clock
    this.#onProbe = settings.onProbe
  }

  /** The cached answer, the probe in flight, or a new probe. Never rejects. */
  answer (): Promise<ReadinessAnswer> {
    const cached = this.#cached
    if (cached !== undefined && this.#clock.now() - cached.at < this.#cacheMs) return Promise.resolve(cached.answer)
    if (this.#inFlight !== undefined) return this.#inFlight
    const probe = this.#probe()
    this.#inFlight = probe
    return probe
  }

  async #probe (): Promise<ReadinessAnswer> {
    let answer: ReadinessAnswer
    try {
      await this.#chain.probe(PROBE_PATH, this.#probeTimeoutMs, this.#node)
      answer = READY
      this.#onProbe('ok')
    } catch (err) {
      answer = { status: 'not ready', reason: 'chain unreachable', error: this.#describe(err) }
      this.#onProbe(chainOutcome(err))
    }
    // Cached from when the answer arrived, as the Go service does: a slow probe still
    // spares the chain for a whole cache period afterwards.
    this.#cached = { answer, at: this.#clock.now() }
    this.#inFlight = undefined
    return answer
  }

  /** A client-safe reason: never an internal URL, address or stack (those stay in the chain client's errors). */
  #describe (err: unknown): string {
    if (err instanceof ChainTimeoutError) return `no answer within ${formatDuration(this.#probeTimeoutMs)}`
    if (err instanceof ChainStatusError) return `chain answered gRPC code ${err.grpcCode}: ${err.message}`
    if (err instanceof ChainUnavailableError) return 'chain unavailable'
    if (err instanceof ChainBadAnswerError) return 'chain answered with a body that is not JSON'
    if (err instanceof ChainAnswerTooLargeError) return 'chain answer too large'
    return 'chain probe failed'
  }
}
