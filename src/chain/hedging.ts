import { REAL_CLOCK, type Clock } from './clock.js'

// Hedged chain reads (docs/hedged-reads.md): when a read's node has not answered after a
// delay adapted to that node's recent latency, the same read goes to a second node and the
// first answer wins. This file holds the policy: each node's delay, and the budget that caps
// the extra load. The chain client (client.ts) sends and aborts the attempts.

/** How a hedge that was sent ended (edge_api_chain_hedges_total's `result`). */
export type HedgeResult =
  /** Its answer was used; the other attempt was aborted. */
  | 'won'
  /** The other attempt's answer was used; the hedge was aborted (or had failed). */
  | 'lost'
  /** The read ended in an error all the same (a gateway error, the chain timeout). */
  | 'failed'

export const HEDGE_RESULTS: readonly HedgeResult[] = ['won', 'lost', 'failed']

/** Why a hedge that was due was not sent (edge_api_chain_hedges_skipped_total's `reason`). */
export type HedgeSkip =
  /** The budget's share of the window's reads is spent. */
  | 'budget'
  /** The replica is shedding, or its chain queue is more than half full. */
  | 'overload'
  /** No other node may take it (down, lagging, or without the read's height). */
  | 'no_node'

export const HEDGE_SKIPS: readonly HedgeSkip[] = ['budget', 'overload', 'no_node']

export interface HedgingOptions {
  /** Hedges at most this share of the reads over the window (0 < budget < 1). */
  readonly budget: number
  /** The shortest delay before a hedge (EDGE_API_HEDGE_MIN_DELAY). */
  readonly minDelayMs: number
  /** The longest: a node's latency above it is no reason to wait longer. */
  readonly maxDelayMs: number
  readonly nodeCount: number
  /** The quantile of a node's answer times a read waits for before it is hedged. @default DELAY_QUANTILE */
  readonly quantile?: number
  /** The window the budget counts reads and hedges over. @default 10 s */
  readonly windowMs?: number
  /** @default performance.now() and setTimeout */
  readonly clock?: Clock
}

/** The quantile of a node's answer times a hedge waits for: 1 read in 20 is hedged for its latency alone. */
export const DELAY_QUANTILE = 0.95
/** The answers each node's quantile is taken over: the last SAMPLES, about a few seconds of a busy replica's reads. */
export const SAMPLES = 128
/** Below this many answers a node's latency is not known yet: the delay is the ceiling. */
export const MIN_SAMPLES = 20
// The quantile is re-sorted every RESORT answers, not per read: a read asks for it, an answer
// feeds it, and sorting 128 numbers per read would cost more than it tells.
const RESORT = 16
const BUCKETS = 10
/**
 * Hedges a window allows beyond its share of the reads: a replica with little traffic
 * (a share of less than one read) can still hedge the few reads that show a node hangs
 * (OVERTAKEN_IN_A_ROW in nodes.ts); with traffic they are nothing next to the share.
 */
export const BURST = 3

/** The last SAMPLES answer times of one node, and their `rank` quantile. */
class NodeLatency {
  readonly #samples = new Float64Array(SAMPLES)
  readonly #rank: number
  #count = 0
  #quantile = Infinity

  constructor (rank: number) {
    this.#rank = rank
  }

  add (ms: number): void {
    this.#samples[this.#count % SAMPLES] = ms
    this.#count++
    if (this.#count % RESORT === 0 || this.#count === MIN_SAMPLES) this.#sort()
  }

  /** Infinity until MIN_SAMPLES answers were seen. */
  get quantile (): number {
    return this.#quantile
  }

  #sort (): void {
    if (this.#count < MIN_SAMPLES) return
    const sorted = this.#samples.slice(0, Math.min(this.#count, SAMPLES)).sort()
    this.#quantile = sorted[Math.max(0, Math.ceil(this.#rank * sorted.length) - 1)] as number
  }
}

/** Reads and hedges over a sliding window, in BUCKETS buckets of windowMs / BUCKETS. */
class Window {
  readonly #reads = new Array<number>(BUCKETS).fill(0)
  readonly #hedges = new Array<number>(BUCKETS).fill(0)
  readonly #bucketMs: number
  #bucket = 0

  constructor (windowMs: number, now: number) {
    this.#bucketMs = windowMs / BUCKETS
    this.#bucket = Math.floor(now / this.#bucketMs)
  }

  read (now: number): void {
    const at = this.#advance(now)
    this.#reads[at] = (this.#reads[at] as number) + 1
  }

  /** Counts a hedge if it stays within `budget` of the window's reads (plus BURST). */
  hedge (now: number, budget: number): boolean {
    const at = this.#advance(now)
    if (sum(this.#hedges) + 1 > budget * sum(this.#reads) + BURST) return false
    this.#hedges[at] = (this.#hedges[at] as number) + 1
    return true
  }

  /** The current bucket's index, after emptying the buckets that fell out of the window. */
  #advance (now: number): number {
    const bucket = Math.floor(now / this.#bucketMs)
    for (let b = Math.max(this.#bucket + 1, bucket - BUCKETS + 1); b <= bucket; b++) {
      this.#reads[b % BUCKETS] = 0
      this.#hedges[b % BUCKETS] = 0
    }
    if (bucket > this.#bucket) this.#bucket = bucket
    return this.#bucket % BUCKETS
  }
}

function sum (values: readonly number[]): number {
  let total = 0
  for (const v of values) total += v
  return total
}

/** The hedging policy of one chain client: when to hedge a read, and whether the budget allows it. */
export class Hedging {
  readonly clock: Clock
  readonly #budget: number
  readonly #minDelayMs: number
  readonly #maxDelayMs: number
  readonly #latency: NodeLatency[]
  readonly #window: Window

  constructor (options: HedgingOptions) {
    this.clock = options.clock ?? REAL_CLOCK
    this.#budget = options.budget
    this.#minDelayMs = options.minDelayMs
    this.#maxDelayMs = Math.max(options.minDelayMs, options.maxDelayMs)
    const rank = options.quantile ?? DELAY_QUANTILE
    this.#latency = Array.from({ length: options.nodeCount }, () => new NodeLatency(rank))
    this.#window = new Window(options.windowMs ?? 10_000, this.clock.now())
  }

  /** How long a read sent to `node` waits before it is hedged: its recent p95, within the floor and the ceiling. */
  delayMs (node: number): number {
    const quantile = (this.#latency[node] as NodeLatency).quantile
    return Math.min(this.#maxDelayMs, Math.max(this.#minDelayMs, quantile))
  }

  /** `node` answered a read in `ms`. */
  answered (node: number, ms: number): void {
    (this.#latency[node] as NodeLatency).add(ms)
  }

  /**
   * A read's attempt on `node` was aborted after `ms` because the read's other attempt
   * answered first: it would have taken longer than `ms`, by how much is unknown. Left out,
   * the slowest answers of a node would be the ones never seen, and each quantile lower than
   * the last: the delay would sink to the floor and every read beyond it be hedged, up to the
   * budget (measured: 10.3% of the reads with a 5 ms floor and no slow node, against 5% by
   * design). Only a wait beyond the node's quantile says anything about it (the answer
   * would have been beyond it too); it counts as an answer at that time.
   */
  overtaken (node: number, ms: number): void {
    const latency = this.#latency[node] as NodeLatency
    if (ms >= latency.quantile) latency.add(ms)
  }

  /** A read was sent (counted once, however many attempts it takes). */
  read (): void {
    this.#window.read(this.clock.now())
  }

  /** Whether a hedge that is due may go now (counted against the budget if so), or why not. */
  admit (overloaded: boolean): HedgeSkip | undefined {
    if (overloaded) return 'overload'
    return this.#window.hedge(this.clock.now(), this.#budget) ? undefined : 'budget'
  }
}
