import type { IncomingHttpHeaders } from 'node:http'
import { REAL_CLOCK, type Clock } from '../clock.js'
import type { ChainTrace } from './types.js'
import { NO_LOG, type NodeLog } from './nodes.js'

// Block heights of the chain's nodes (docs/heights-and-cache.md): the request header that
// pins a query to a height, the response header with the height answered, the errors of a
// height a node cannot serve, and each node's head as this replica knows it.

/** Pins a gateway query to a height (the SDK's GRPCBlockHeightHeader, forwarded by the gateway). */
export const HEIGHT_HEADER = 'x-cosmos-block-height'
/** The height a query was answered at: the SDK's response metadata under grpc-gateway's outgoing prefix. */
export const ANSWERED_HEIGHT_HEADER = 'grpc-metadata-x-cosmos-block-height'

// By message, not gRPC code: the SDK versions disagree on the code (ErrInvalidHeight has none
// in some, so it arrives as Unknown), and a code-based mapping would make them 400/404.
const UNSERVABLE_HEIGHT = [
  'cannot query with height in the future', // baseapp CreateQueryContext, above the head
  'failed to load state at height', // baseapp CreateQueryContext, pruned
  'version does not exist', // iavl, pruned
  'is not available, lowest height is', // CometBFT block store, pruned
  'must be less than or equal to the current blockchain height', // CometBFT RPC, above the head
  'bigger than the chain length', // the SDK's Tendermint service, above the head
  'bigger then the chain length' // the same, as some SDK versions spell it
]

/** Whether a gateway error says the node cannot serve the height asked (the node's failure, not the client's). */
export function isUnservableHeight (message: string): boolean {
  return UNSERVABLE_HEIGHT.some((words) => message.includes(words))
}

/** The height a node says it answered at, if it says (a positive integer header). */
export function answeredHeight (headers: IncomingHttpHeaders): number | undefined {
  const value = headers[ANSWERED_HEIGHT_HEADER]
  if (typeof value !== 'string' || !/^[1-9]\d{0,15}$/.test(value)) return undefined
  return Number(value)
}

/**
 * The pool of replicas this one shares heads with (src/shared/head-hints.ts): told of each
 * new best head, and what a latest-state read waits for before it picks its height.
 */
export interface HeadPool {
  confirmed (height: number): void
  settled (): Promise<void> | undefined
}

export interface ChainHeadsOptions {
  readonly nodeCount: number
  /** A node more than this many blocks behind the best head takes no latest-state reads (EDGE_API_MAX_NODE_LAG). */
  readonly maxLag: number
  /** The oldest a known head may be when a latest-state read starts (EDGE_API_HEAD_MAX_AGE). */
  readonly maxAgeMs: number
  /** Asks the nodes for their latest height, each answer reported with observe(); traced as `trace`'s request's. Never rejects. */
  readonly poll: (trace: ChainTrace | undefined) => Promise<unknown>
  readonly log: NodeLog | undefined
  /** Each node's base URL, for the log. */
  readonly urls: readonly string[]
  /** What a head's age is read on (the chain client's clock). @default REAL_CLOCK */
  readonly clock?: Clock | undefined
}

/** The warn line when no node's head poll confirms a head any more, and the one when one does again. */
export const HEIGHTS_UNKNOWN = 'chain heights unknown; serving latest-state reads unpinned'
export const HEIGHTS_KNOWN = 'chain heights known again; latest-state reads pinned to the head'

/**
 * Each node's head as this replica knows it, and the height latest-state answers are served
 * at. Heads come from the answers' own heights and from a single-flight poll of every node's
 * latest block whenever the newest confirmation is older than maxAgeMs (half of it: in the
 * background, so a busy replica's reads never wait for it). A confirmation is an answer at
 * the node's latest height at or above the best head: a node 1000 blocks behind confirms
 * nothing (issue 33). The served height is the best head, never lower than one served
 * before: a replica never goes backwards.
 *
 * Heights fail safe (issue 33): when a poll that reads waited for (two rounds) confirms no
 * head, because no node tells its height (a path-filtering proxy, an older gateway) or its
 * poll fails or hangs, the heights are unknown: latest() answers undefined at once and the
 * reads go to the nodes unpinned, as the Go service read them, while the poll keeps asking in
 * the background (once per maxAgeMs at most) until it confirms a head again. One warn line per
 * change; `known` is the edge_api_chain_heights_known gauge.
 */
export class ChainHeads {
  readonly #heads: number[]
  readonly #lagging: boolean[]
  readonly #maxLag: number
  readonly #maxAgeMs: number
  readonly #poll: (trace: ChainTrace | undefined) => Promise<unknown>
  readonly #log: NodeLog
  readonly #urls: readonly string[]
  readonly #clock: Clock
  #served = 0
  #confirmedAt = -Infinity
  #polling: Promise<void> | undefined
  #polledAt = -Infinity
  #known = true
  #pool: HeadPool | undefined
  // --- onHead (issue 42; the heights branch owns the final form) ---
  readonly #headListeners = new Set<(height: number) => void>()

  constructor (options: ChainHeadsOptions) {
    this.#heads = new Array<number>(options.nodeCount).fill(0)
    this.#lagging = new Array<boolean>(options.nodeCount).fill(false)
    this.#maxLag = options.maxLag
    this.#maxAgeMs = options.maxAgeMs
    this.#poll = options.poll
    this.#log = options.log ?? NO_LOG
    this.#urls = options.urls
    this.#clock = options.clock ?? REAL_CLOCK
  }

  /**
   * A node answered at `height`. `latest`: it was asked for its latest height (an unpinned
   * query, the poll): at or above the best head, that confirms the best head as of now.
   */
  observe (node: number, height: number, latest: boolean): void {
    if (latest && height >= this.best) this.#confirmedAt = this.#clock.now()
    if (height <= (this.#heads[node] as number)) return
    const pool = this.#pool
    const rises = height > this.best
    this.#heads[node] = height
    if (rises) pool?.confirmed(height)
    if (rises) for (const listener of this.#headListeners) listener(height)
  }

  /** Calls `listener` each time the best known head rises; the returned function unsubscribes. */
  onHead (listener: (height: number) => void): () => void {
    this.#headListeners.add(listener)
    return () => { this.#headListeners.delete(listener) }
  }

  /** Shares this replica's heads with the pool's (the shared tier), and takes the pool's as hints. */
  share (pool: HeadPool): void {
    this.#pool = pool
  }

  /** Polls the nodes now, after any poll in flight (which may have asked before a new block existed); never rejects. */
  lookAgain (): Promise<void> {
    return (this.#polling ?? Promise.resolve()).then(() => this.#refresh(undefined))
  }

  /** The highest height any node has answered (0: none yet). */
  get best (): number {
    return Math.max(0, ...this.#heads)
  }

  /** The highest height served to a latest-state read (0: none yet). */
  get served (): number {
    return this.#served
  }

  /** Blocks a node may lag the best head and still take latest-state reads (EDGE_API_MAX_NODE_LAG). */
  get maxLag (): number {
    return this.#maxLag
  }

  /** False while no node's head poll confirms a head: latest-state reads go unpinned. */
  get known (): boolean {
    return this.#known
  }

  /** Node `node`'s head as last seen (0: unknown). */
  head (node: number): number {
    return this.#heads[node] as number
  }

  /** Each node's blocks behind the best head (0 while unknown). */
  get lags (): number[] {
    const best = this.best
    return this.#heads.map((head) => head === 0 ? 0 : best - head)
  }

  /** Whether the node lags the best head by more than maxLag: it takes no latest-state reads. */
  lagging (node: number): boolean {
    return this.#lagging[node] as boolean
  }

  /**
   * The height for a latest-state answer if the best head was confirmed within maxAgeMs:
   * the best head, never below one served before (served from now on). Undefined otherwise.
   */
  fresh (): number | undefined {
    if (this.#clock.now() - this.#confirmedAt > this.#maxAgeMs || this.best === 0) return undefined
    return this.serve(this.best)
  }

  /** Records `height` as served to a latest-state read; returns the height to serve: never below one served before. */
  serve (height: number): number {
    this.#served = Math.max(this.#served, height)
    return this.#served
  }

  /**
   * As fresh(), asking the nodes (one poll at a time, shared) when the head is older than
   * maxAgeMs (twice if the first round tells nothing), and in the background from half of
   * it, so that a busy replica's reads never wait for it. Undefined when no head is
   * confirmed: the read goes unpinned (while the heights are unknown, at once).
   * A poll `trace`'s request waits for is traced as its (a shared one as the request's that
   * started it); one in the background is no request's.
   */
  async latest (trace?: ChainTrace): Promise<number | undefined> {
    // Another replica confirmed a head above this one's best: its nodes are being asked now.
    const hinted = this.#pool?.settled()
    if (hinted !== undefined) await hinted
    const startedAt = this.#clock.now()
    const stale = (): boolean => startedAt - this.#confirmedAt > this.#maxAgeMs
    if (stale() && this.#known) {
      await this.#refresh(trace)
      // No node told its head: one more round at once. A poll can lose a race with a
      // keep-alive connection the node is closing ("other side closed", seen under load).
      if (stale()) await this.#refresh(trace)
      if (stale()) this.#change(false)
    } else if (startedAt - this.#confirmedAt > this.#maxAgeMs / 2) {
      this.#background()
    }
    // The age counts from when this read started: waiting for the poll does not age it.
    if (stale() || this.best === 0) return undefined
    return this.serve(this.best)
  }

  /**
   * Asks the nodes for their heads now (joining a poll in flight); true when a node told its
   * head in it. A client's minimum height waits on it (src/cache/min-height.ts).
   */
  async poll (trace?: ChainTrace): Promise<boolean> {
    const before = this.#confirmedAt
    await this.#refresh(trace)
    return this.#confirmedAt > before
  }

  /** A poll no read waits for, at most one per half maxAgeMs; one that confirms a head makes the heights known again. */
  #background (): void {
    const startedAt = this.#clock.now()
    if (this.#polling !== undefined || startedAt - this.#polledAt < this.#maxAgeMs / 2) return
    // Never rejects: a failed poll only leaves the heights unknown.
    this.#refresh(undefined).then(() => {
      if (this.#confirmedAt >= startedAt) this.#change(true)
    })
  }

  #refresh (trace: ChainTrace | undefined): Promise<void> {
    // Lag is judged once every node has told its head in the same poll: judged on each answer,
    // one node's fresh head against another's older one would flap.
    if (this.#polling === undefined) this.#polledAt = this.#clock.now()
    this.#polling ??= this.#poll(trace).then(() => { this.#judgeLag() }, () => {}).finally(() => { this.#polling = undefined })
    return this.#polling
  }

  /** Heights known or not: one warn line per change. */
  #change (known: boolean): void {
    if (known === this.#known) return
    this.#known = known
    const fields = { maxAgeMs: this.#maxAgeMs, best: this.best, served: this.#served }
    this.#log.warn(fields, known ? HEIGHTS_KNOWN : HEIGHTS_UNKNOWN)
  }

  #judgeLag (): void {
    const best = this.best
    this.#heads.forEach((head, node) => {
      // A node whose head is not known yet is not judged: the poll asks it next.
      const lagging = head !== 0 && best - head > this.#maxLag
      if (lagging === this.#lagging[node]) return
      this.#lagging[node] = lagging
      const fields = { node: this.#urls[node], head, best, maxLag: this.#maxLag }
      if (lagging) this.#log.warn(fields, 'chain node lagging; no latest-state reads until it catches up')
      else this.#log.info(fields, 'chain node caught up')
    })
  }
}
