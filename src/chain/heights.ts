import { pause, REAL_CLOCK, type Clock } from '../clock.js'
import { HeadPollScheduler } from './head-poll-scheduler.js'
import { HeadTable, type HeadReport } from './head-table.js'
import { HeightsKnowledge, type PollOutcome } from './heights-state.js'
import { NO_LOG, type NodeLog } from './nodes.js'
import { ServedFloor } from './served-floor.js'
import type { ChainTrace } from './types.js'

// The heights latest-state reads are served at (docs/heights-and-cache.md): the parts are the
// heads table (head-table.ts), the known/unknown state (heights-state.ts), the served floor
// (served-floor.ts) and the poll's schedule (head-poll-scheduler.ts); ChainHeads puts them
// together for the chain client, the answer cache and the pool's hints.

export interface ChainHeadsOptions {
  readonly nodeCount: number
  /** A node more than this many blocks behind the best head takes no latest-state reads (EDGE_API_MAX_NODE_LAG). */
  readonly maxLag: number
  /** The oldest a known head may be when a latest-state read starts (EDGE_API_HEAD_MAX_AGE). */
  readonly maxAgeMs: number
  /** Asks the nodes for their latest height, each answer reported with observe(…, 'poll'); traced as `trace`'s request's. Never rejects. */
  readonly poll: (trace: ChainTrace | undefined) => Promise<unknown>
  /** Each node's budget in a poll: a silent round shorter than half of it is asked again at once. @default 500 */
  readonly pollTimeoutMs?: number
  readonly log: NodeLog | undefined
  /** Each node's base URL, for the log. */
  readonly urls: readonly string[]
  /** What a head's age is read on (the chain client's clock). @default REAL_CLOCK */
  readonly clock?: Clock | undefined
  /** The longest a latest-state read waits for a look a pool's head started (src/shared/head-hints.ts). @default LOOK_WAIT_MS */
  readonly lookWaitMs?: number
  /** A node's head not told again for this long no longer counts. @default HEAD_EXPIRES_MS */
  readonly headExpiresMs?: number
}

/** The longest a latest-state read waits for the look a pool's head started: the look is one head poll (~1–3 ms on a near node). */
export const LOOK_WAIT_MS = 50

interface Look {
  readonly height: number
  readonly done: Promise<boolean>
  /** What reads wait for: the look, at most lookWaitMs (one timer per look, not per read). */
  readonly waited: Promise<unknown>
}

/**
 * Each node's head as this replica knows it, and the height latest-state answers are served
 * at. Heads come from the answers' own heights (when plausible, head-table.ts) and from a
 * single-flight poll of every node's latest block whenever the newest confirmation is older
 * than maxAgeMs (from half of it in the background, so a busy replica's reads never wait for
 * it). A confirmation is a latest height told at or above the best head: a node 1000 blocks
 * behind confirms nothing (issue 33). The served height is the best head, never lower than
 * one served before: a replica never goes backwards.
 *
 * Heights fail safe (issue 33): a poll round that tells no head makes the heights unknown
 * (heights-state.ts); latest() then answers undefined without waiting and the reads go to
 * the nodes unpinned, as the Go service read them, while the poll keeps asking in the
 * background until a round tells a head again.
 */
export class ChainHeads {
  readonly #table: HeadTable
  readonly #nodeCount: number
  readonly #knowledge: HeightsKnowledge
  readonly #floor = new ServedFloor()
  readonly #scheduler: HeadPollScheduler
  readonly #maxLag: number
  readonly #maxAgeMs: number
  readonly #lookWaitMs: number
  readonly #log: NodeLog
  readonly #clock: Clock
  readonly #headListeners = new Set<(height: number) => void>()
  #confirmedAt = -Infinity
  #polledTold = 0
  #announced = 0
  #look: Look | undefined

  constructor (options: ChainHeadsOptions) {
    this.#nodeCount = options.nodeCount
    this.#log = options.log ?? NO_LOG
    this.#clock = options.clock ?? REAL_CLOCK
    this.#maxLag = options.maxLag
    this.#maxAgeMs = options.maxAgeMs
    this.#lookWaitMs = options.lookWaitMs ?? LOOK_WAIT_MS
    this.#table = new HeadTable({ nodeCount: options.nodeCount, maxLag: options.maxLag, urls: options.urls, log: this.#log, expiresMs: options.headExpiresMs })
    this.#knowledge = new HeightsKnowledge(this.#log)
    const poll = options.poll
    this.#scheduler = new HeadPollScheduler({
      poll: async (trace) => this.#pollOnce(poll, trace),
      onRound: (outcome) => { this.#polled(outcome) },
      intervalMs: options.maxAgeMs / 2,
      retryWithinMs: (options.pollTimeoutMs ?? 500) / 2,
      clock: this.#clock
    })
  }

  /**
   * Node `node` told `height` (`report`: its head poll, an unpinned answer, a pinned one).
   * Counted if plausible (head-table.ts); a latest height at or above the best head confirms
   * it as of now. Listeners of onHead are told when the best head rises.
   */
  observe (node: number, height: number, report: HeadReport): void {
    const now = this.#clock.now()
    if (report === 'poll') this.#polledTold++
    const verdict = this.#table.record(node, height, report, now)
    if (verdict === 'implausible') return
    const best = this.best
    if (report !== 'pinned' && height >= best) this.#confirmedAt = now
    if (best < this.#announced) this.#announced = best
    if (best <= this.#announced) return
    this.#announced = best
    for (const listener of this.#headListeners) listener(best)
  }

  /**
   * Calls `listener` with the best head each time it rises (from a poll, an answer, or a look
   * a pool's head started); returns the function that unsubscribes it. Called synchronously,
   * inside the chain exchange that told the head: a listener defers any I/O of its own.
   */
  onHead (listener: (height: number) => void): () => void {
    this.#headListeners.add(listener)
    return () => { this.#headListeners.delete(listener) }
  }

  /**
   * Another replica's nodes told `height` (src/shared/head-hints.ts): this replica's nodes are
   * polled now (a round after any in flight), and latest-state reads wait for that look, at
   * most lookWaitMs. A look for a height at or below one being looked for joins it. Resolves
   * to whether this replica's nodes have it now. A hint is never a height served.
   */
  lookFor (height: number): Promise<boolean> {
    const look = this.#look
    if (look !== undefined && height <= look.height) return look.done
    const done = this.#scheduler.next(undefined).then(() => this.best >= height)
    const started: Look = { height, done, waited: Promise.race([done, pause(this.#clock, this.#lookWaitMs)]) }
    this.#look = started
    done.then(() => { if (this.#look === started) this.#look = undefined })
    return done
  }

  /** The highest height any node has told, as counted (0: none yet). */
  get best (): number {
    return this.#table.best(this.#clock.now())
  }

  /** The highest height served to a latest-state read (0: none yet). */
  get served (): number {
    return this.#floor.height
  }

  /** Blocks a node may lag the best head and still take latest-state reads (EDGE_API_MAX_NODE_LAG). */
  get maxLag (): number {
    return this.#maxLag
  }

  /** False while the head poll tells no head: latest-state reads go unpinned. */
  get known (): boolean {
    return this.#knowledge.known
  }

  /** Node `node`'s head as last told (0: unknown). */
  head (node: number): number {
    return this.#table.head(node, this.#clock.now())
  }

  /** Each node's blocks behind the best head (0 while unknown). */
  get lags (): number[] {
    const now = this.#clock.now()
    const best = this.#table.best(now)
    return this.#heads(now).map((head) => head === 0 ? 0 : best - head)
  }

  /** Whether the node lags the best head by more than maxLag: it takes no latest-state reads. */
  lagging (node: number): boolean {
    return this.#table.lagging(node)
  }

  /** The best head if it was confirmed within maxAgeMs, else undefined. A query: nothing is served by asking. */
  freshHead (): number | undefined {
    if (this.#clock.now() - this.#confirmedAt > this.#maxAgeMs || this.best === 0) return undefined
    return this.best
  }

  /**
   * A latest-state answer is served at `height` (at most the best head: a height no node
   * told as its head raises nothing). Read `served` for the height to serve.
   */
  raiseServed (height: number): void {
    const best = this.best
    this.#dropFalseFloor(best)
    this.#floor.raise(Math.min(height, best))
  }

  /**
   * The height for a latest-state read, raising the served floor to it: the best head if
   * confirmed within maxAgeMs when the read started (polling the nodes first when it is
   * older, if the heights are not unknown; in the background from half of it), never below
   * one served before. Undefined when no head is confirmed: the read goes unpinned.
   * A poll `trace`'s request waits for is traced as its; one in the background is no request's.
   */
  async latest (trace?: ChainTrace): Promise<number | undefined> {
    // Another replica's nodes told a head above this one's best: its nodes are being asked now.
    if (this.#look !== undefined) await this.#look.waited
    const startedAt = this.#clock.now()
    const stale = (): boolean => startedAt - this.#confirmedAt > this.#maxAgeMs
    if (stale() && this.#knowledge.known) await this.#scheduler.round(trace)
    else if (!this.#knowledge.known || startedAt - this.#confirmedAt > this.#maxAgeMs / 2) this.#scheduler.background()
    // The age counts from when this read started: waiting for the poll does not age it.
    if (stale() || this.best === 0) return undefined
    this.raiseServed(this.best)
    return this.served
  }

  /**
   * latest() when it has nothing to wait for and nothing to start: the height it would answer
   * when the best head was confirmed within half of maxAgeMs (no poll, not even in the
   * background) and no other replica's head is being looked at; undefined otherwise, and then
   * latest() decides. A cache hit at a fresh head is so answered without a promise.
   */
  latestNow (): number | undefined {
    if (this.#look !== undefined || !this.#knowledge.known || this.best === 0) return undefined
    if (this.#clock.now() - this.#confirmedAt > this.#maxAgeMs / 2) return undefined
    this.raiseServed(this.best)
    return this.served
  }

  /**
   * Asks the nodes for their heads now (joining a poll in flight); true when a node told its
   * head in it. A client's minimum height waits on it (src/cache/min-height.ts).
   */
  async poll (trace?: ChainTrace): Promise<boolean> {
    return (await this.#scheduler.round(trace)) === 'told'
  }

  async #pollOnce (poll: (trace: ChainTrace | undefined) => Promise<unknown>, trace: ChainTrace | undefined): Promise<PollOutcome> {
    const before = this.#polledTold
    await poll(trace)
    return this.#polledTold > before ? 'told' : 'silent'
  }

  #polled (outcome: PollOutcome): void {
    const now = this.#clock.now()
    this.#table.judgeLag(now)
    this.#knowledge.polled(outcome, { maxAgeMs: this.#maxAgeMs, best: this.#table.best(now), served: this.#floor.height })
  }

  #dropFalseFloor (best: number): void {
    const floor = this.#floor.height
    if (!this.#floor.dropAbove(best, this.#table.window)) return
    this.#log.warn({ served: floor, best }, 'served height far above every node\'s head; dropped to the best head')
  }

  #heads (now: number): number[] {
    return Array.from({ length: this.#nodeCount }, (_, node) => this.#table.head(node, now))
  }
}
