import type { NodeLog } from './nodes.js'

// Each node's head as this replica knows it (docs/heights-and-cache.md, "Heads"): what counts
// as a node's head, how long it counts, and which node lags. One bogus height (a proxy's
// glitch, a node of another network) must not become the height every latest read is pinned
// to: erpc#924's frozen floor, inside one replica (review A14).

/** How a node told a height. */
export type HeadReport =
  /** The head poll: the node's own latest block. */
  | 'poll'
  /** An unpinned answer: read at the node's latest height. */
  | 'latest'
  /** An answer pinned to a height edge-api chose: the node has at least that height. */
  | 'pinned'

/** What became of a report: counted (the node's head now), behind (told nothing new), implausible (not counted). */
export type HeadVerdict = 'counted' | 'behind' | 'implausible'

/** Blocks beyond EDGE_API_MAX_NODE_LAG an answer may be ahead of the best head and still count at once. */
export const RISE_SLACK_BLOCKS = 3
/**
 * The shortest block interval an answer's rise is allowed for: a replica idle for a minute sees
 * the next answer up to 120 blocks (+ the slack) ahead, plausibly. CometBFT chains make blocks
 * every second or more; 10⁹ blocks would take 15 years.
 */
export const MIN_BLOCK_INTERVAL_MS = 500
/** A node's head not told again for this long no longer counts (a down node's, an idle replica's): the next poll tells it afresh. */
export const HEAD_EXPIRES_MS = 30_000

export interface HeadTableOptions {
  readonly nodeCount: number
  /** EDGE_API_MAX_NODE_LAG. */
  readonly maxLag: number
  /** Each node's base URL, for the log. */
  readonly urls: readonly string[]
  readonly log: NodeLog
  /** @default HEAD_EXPIRES_MS */
  readonly expiresMs?: number | undefined
}

interface Head {
  height: number
  /** clock.now() when the node last told it. */
  at: number
}

/**
 * The heads table. A rise of a node's head counts at once if plausible: at most maxLag +
 * RISE_SLACK_BLOCKS (+ one block per MIN_BLOCK_INTERVAL_MS since the best head was last told)
 * above the best head. A higher one told by an answer never counts; told by the node's head
 * poll, it counts once the node's next poll tells it again (a glitch does not repeat; a node
 * of another network would, and its lag says so). A node telling its latest height far below
 * its recorded head (restarted lower, or the record was the first head ever told, and false)
 * is believed. A head not told again for expiresMs is forgotten.
 */
export class HeadTable {
  readonly #heads: Head[]
  readonly #lagging: boolean[]
  readonly #maxLag: number
  readonly #urls: readonly string[]
  readonly #log: NodeLog
  readonly #expiresMs: number
  readonly #implausible: boolean[]
  /** The implausible height each node's last head poll told (0: none), confirmed if its next one tells it again. */
  readonly #candidates: number[]

  constructor (options: HeadTableOptions) {
    this.#heads = Array.from({ length: options.nodeCount }, () => ({ height: 0, at: -Infinity }))
    this.#lagging = new Array<boolean>(options.nodeCount).fill(false)
    this.#implausible = new Array<boolean>(options.nodeCount).fill(false)
    this.#candidates = new Array<number>(options.nodeCount).fill(0)
    this.#maxLag = options.maxLag
    this.#urls = options.urls
    this.#log = options.log
    this.#expiresMs = options.expiresMs ?? HEAD_EXPIRES_MS
  }

  /** Blocks (EDGE_API_MAX_NODE_LAG + RISE_SLACK_BLOCKS) a height may be off a head and still be taken for the same chain's. */
  get window (): number {
    return this.#maxLag + RISE_SLACK_BLOCKS
  }

  /** Node `node` told `height` at `now`: records it as its head if it counts. */
  record (node: number, height: number, report: HeadReport, now: number): HeadVerdict {
    const head = this.#heads[node] as Head
    const current = this.#live(head, now)
    const tellsLatest = report !== 'pinned'
    if (tellsLatest && current - height > this.window) return this.#set(node, height, now)
    if (height < current) return 'behind'
    if (height === current) {
      head.at = now
      return 'behind'
    }
    if (this.#plausible(height, now) || this.#confirms(node, height, report)) return this.#set(node, height, now)
    if (report === 'poll') this.#candidates[node] = height
    return this.#reject(node, height, now)
  }

  /** The highest head of any node, as `now` (0: none known). */
  best (now: number): number {
    return Math.max(0, ...this.#heads.map((head) => this.#live(head, now)))
  }

  /** Node `node`'s head as `now` (0: unknown or expired). */
  head (node: number, now: number): number {
    return this.#live(this.#heads[node] as Head, now)
  }

  /** Whether the node lagged the best head by more than maxLag when last judged: it takes no latest-state reads. */
  lagging (node: number): boolean {
    return this.#lagging[node] as boolean
  }

  /**
   * Judges each node's lag against the best head, once every node has told its head in the
   * same poll: judged on each answer, one node's fresh head against another's older one
   * would flap. One log line per change.
   */
  judgeLag (now: number): void {
    const best = this.best(now)
    this.#heads.forEach((record, node) => {
      const head = this.#live(record, now)
      // A node whose head is not known is not judged: the poll asks it next.
      const lagging = head !== 0 && best - head > this.#maxLag
      if (lagging === this.#lagging[node]) return
      this.#lagging[node] = lagging
      const fields = { node: this.#urls[node], head, best, maxLag: this.#maxLag }
      if (lagging) this.#log.warn(fields, 'chain node lagging; no latest-state reads until it catches up')
      else this.#log.info(fields, 'chain node caught up')
    })
  }

  #live (head: Head, now: number): number {
    return now - head.at > this.#expiresMs ? 0 : head.height
  }

  #plausible (height: number, now: number): boolean {
    let best = 0
    let at = -Infinity
    for (const head of this.#heads) {
      const live = this.#live(head, now)
      if (live > best) {
        best = live
        at = head.at
      }
    }
    if (best === 0) return true
    return height - best <= this.window + Math.floor((now - at) / MIN_BLOCK_INTERVAL_MS)
  }

  /** Whether the node's head poll tells again (or beyond) the implausible height its previous one told. */
  #confirms (node: number, height: number, report: HeadReport): boolean {
    const candidate = this.#candidates[node] as number
    return report === 'poll' && candidate !== 0 && height >= candidate && height - candidate <= this.window
  }

  #set (node: number, height: number, now: number): HeadVerdict {
    this.#candidates[node] = 0
    this.#heads[node] = { height, at: now }
    if (this.#implausible[node] === true) {
      this.#implausible[node] = false
      this.#log.info({ node: this.#urls[node], head: height }, 'chain node heights plausible again')
    }
    return 'counted'
  }

  /** One warn line per episode of implausible heights from a node, however many arrive. */
  #reject (node: number, height: number, now: number): HeadVerdict {
    if (this.#implausible[node] !== true) {
      this.#implausible[node] = true
      this.#log.warn({ node: this.#urls[node], height, best: this.best(now), window: this.window }, 'chain node told a height far above every head; not counted unless its head poll tells it twice')
    }
    return 'implausible'
  }
}
