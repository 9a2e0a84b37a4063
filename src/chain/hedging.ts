import { REAL_CLOCK, type Clock } from '../clock.js'

// Hedged chain reads (docs/hedged-reads.md): when a read's node has not answered after a
// delay adapted to that node's recent latency, the same read goes to a second node and the
// first answer wins. This file holds the policy: each node's delay, and the budget that caps
// the extra load. hedged-read.ts sends and aborts the attempts.

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
/**
 * The lowest quantile of its own answers the other nodes can bring a node's delay down to
 * (Hedging.delayMs): however narrow their tails, at most 1 read in 10 of a node is hedged
 * for its latency alone.
 */
export const LOWEST_QUANTILE = 0.9
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

/** The last SAMPLES answer times of one node: their `rank` quantile, the LOWEST_QUANTILE one and their median. */
class NodeLatency {
  readonly #samples = new Float64Array(SAMPLES)
  readonly #rank: number
  readonly #lowestRank: number
  #count = 0
  #quantile = Infinity
  #lowest = Infinity
  #median = Infinity

  constructor (rank: number) {
    this.#rank = rank
    this.#lowestRank = Math.min(rank, LOWEST_QUANTILE)
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

  /** Its LOWEST_QUANTILE (or its `rank` one, if lower). */
  get lowest (): number {
    return this.#lowest
  }

  /**
   * What this node's quantile says of `node`'s: this node's tail moved to `node`'s median,
   * shifted by the difference of the medians (a node farther away: the same tail, later) or
   * scaled by their ratio (a node slower at everything), whichever is later, so that a node
   * merely slower than this one keeps about its own quantile. Infinity while either is unknown.
   */
  predicts (node: NodeLatency): number {
    if (this.#median === Infinity || node.#median === Infinity) return Infinity
    const shifted = this.#quantile + node.#median - this.#median
    // A median of 0 (answers faster than the clock's resolution) scales nothing.
    return this.#median > 0 ? Math.max(shifted, this.#quantile * node.#median / this.#median) : shifted
  }

  #sort (): void {
    if (this.#count < MIN_SAMPLES) return
    const sorted = this.#samples.slice(0, Math.min(this.#count, SAMPLES)).sort()
    const at = (rank: number): number => sorted[Math.max(0, Math.ceil(rank * sorted.length) - 1)] as number
    this.#quantile = at(this.#rank)
    this.#lowest = at(this.#lowestRank)
    this.#median = sorted[Math.floor(sorted.length / 2)] as number
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

  /**
   * How long a read sent to `node` waits before it is hedged: the lower of its own p95 and what
   * the other nodes' p95 says of it (NodeLatency.predicts), but not below its own p90
   * (LOWEST_QUANTILE), within the floor and the ceiling.
   * A node slow on a few of its answers has no p95 of its own to go by: with about 1 answer in
   * 20 slow, its p95 falls between its ordinary answers and the slow ones (the waits a hedge
   * overtook), and its delay ends at its slowest ordinary answers or above. Another node's tail,
   * moved to this node's median, says when one of its reads is late by its ordinary standard
   * (docs/hedged-reads.md, "Delay").
   */
  delayMs (node: number): number {
    const own = this.#latency[node] as NodeLatency
    let predicted = Infinity
    for (const other of this.#latency) if (other !== own) predicted = Math.min(predicted, other.predicts(own))
    const delay = Math.min(own.quantile, Math.max(own.lowest, predicted))
    return Math.min(this.#maxDelayMs, Math.max(this.#minDelayMs, delay))
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
