import { Pool } from 'undici'
import { REAL_CLOCK, type Clock } from '../clock.js'

/** What the node set logs: one line per state change of a node (a pino logger fits). */
export interface NodeLog {
  info (fields: object, msg: string): void
  warn (fields: object, msg: string): void
}

export interface ChainNodesOptions {
  /** Base URLs of the nodes of one chain, in order of preference (CHAIN_REST_URL). */
  readonly urls: readonly string[]
  /** Options of each node's keep-alive pool. */
  readonly pool: Pool.Options
  /** Asks a node that is down whether it answers again; it reports its outcome itself (answered/failed). */
  readonly probe: (node: ChainNode) => Promise<unknown>
  readonly log?: NodeLog
  /** How long a node that failed is skipped before it is probed: doubling from initialMs up to maxMs. @default 250 ms to 5 s */
  readonly backoff?: { readonly initialMs: number, readonly maxMs: number }
  /** The clock of the backoff and of the rate limits' windows. @default performance.now() and setTimeout */
  readonly clock?: Clock | undefined
}

/**
 * A node whose reads a hedge overtook this many times in a row, without answering one read
 * meanwhile, is hanging: it is skipped like a node that does not answer (docs/hedged-reads.md).
 */
export const OVERTAKEN_IN_A_ROW = 3

/**
 * How long a node that a hedge overtook is tried after the nodes none overtook: a hedge that
 * wins says that, for that read, asking the other node after the delay was faster than waiting
 * for this one (docs/hedged-reads.md, "Which node first").
 */
export const OVERTAKEN_DEMOTES_MS = 10_000

interface Down {
  /** clock.now() when the node went down. */
  readonly since: number
  /** How long until the next probe; doubles after each failed one. */
  retryMs: number
  cancel?: () => void
}

/** One chain node: its own keep-alive pool, the reads it has in flight, and whether it is down. */
export class ChainNode {
  /** Position in CHAIN_REST_URL (0-based); also its rank of preference. */
  readonly index: number
  /** The base URL as configured, for the log (never for clients). */
  readonly url: string
  readonly origin: string
  /** The base URL's path (no trailing slash), prepended to every gateway path. */
  readonly prefix: string
  readonly pool: Pool
  /** Reads sent to this node and not answered yet. */
  inFlight = 0
  /** Set while the node is skipped; managed by ChainNodes. */
  down: Down | undefined
  /** Reads of this node that a hedge overtook since it last answered; managed by ChainNodes. */
  overtaken = 0
  /** Until when (clock.now()) it is tried after the nodes no hedge overtook; managed by ChainNodes. */
  demotedUntil = -Infinity
  /** Until when (clock.now()) it is skipped for its own Retry-After: no answer clears it; managed by ChainNodes. */
  rateLimitedUntil = -Infinity
  /** Caught lying by the verified-height cursor (src/light/cursor.ts): tried after every other node, for good; managed by ChainNodes. */
  lying = false

  constructor (index: number, url: string, pool: Pool.Options) {
    const base = new URL(url)
    this.index = index
    this.url = url
    this.origin = base.origin
    this.prefix = base.pathname.replace(/\/+$/, '')
    this.pool = new Pool(this.origin, pool)
  }

  get healthy (): boolean {
    return this.down === undefined
  }
}

export const NO_LOG: NodeLog = { info: () => {}, warn: () => {} }

/**
 * The nodes of one chain and their health. A node that refuses, drops the connection or
 * does not answer in time is skipped for a short, growing interval and re-admitted as soon
 * as it answers again (its probe, a readiness probe, or a read sent to it because no node
 * was healthy; a single node is only ever re-admitted so).
 * Reads choose among the healthy nodes the one with the fewest reads in flight, the first
 * configured on a tie: an idle service keeps reading one node (consistent block heights),
 * and a node that hangs holds reads in flight, so new reads go elsewhere at once. A node that
 * a hedge overtook in the last OVERTAKEN_DEMOTES_MS comes after the others: a node that
 * stalls on some of its answers then takes few reads, and a stalled read costs its hedge's
 * delay. A node that refused a read for its load is tried after all the others until its
 * Retry-After (rateLimited), whatever it answers meanwhile.
 */
export class ChainNodes {
  readonly all: readonly ChainNode[]
  readonly #probe: (node: ChainNode) => Promise<unknown>
  readonly #log: NodeLog
  readonly #initialMs: number
  readonly #maxMs: number
  readonly #clock: Clock
  #closed = false

  constructor (options: ChainNodesOptions) {
    this.all = options.urls.map((url, i) => new ChainNode(i, url, options.pool))
    this.#probe = options.probe
    this.#log = options.log ?? NO_LOG
    this.#initialMs = options.backoff?.initialMs ?? 250
    this.#maxMs = options.backoff?.maxMs ?? 5000
    this.#clock = options.clock ?? REAL_CLOCK
  }

  /**
   * The node a read tries next, none of those it `tried` already: a healthy one if any
   * (fewest in flight, then configured order), else a down one (the one that failed fewest
   * probes, so most likely back), because a read that would fail anyway might as well ask.
   * Among nodes equally healthy, those that `suit` (a pinned read: the node has the height)
   * come first. Undefined once every node has been tried.
   */
  pick (tried: ReadonlySet<ChainNode> = new Set(), suits: (node: ChainNode) => boolean = always): ChainNode | undefined {
    const now = this.#clock.now()
    let best: ChainNode | undefined
    for (const node of this.all) {
      if (tried.has(node)) continue
      if (best === undefined || this.#rank(node, best, suits, now) < 0) best = node
    }
    return best
  }

  /**
   * Whether the node takes reads now: not down, and not within a rate limit's window. A node
   * that takes none is still asked when no node does (pick) and by readiness's probe.
   */
  takesReads (node: ChainNode): boolean {
    return node.healthy && !node.lying && !this.#rateLimited(node, this.#clock.now())
  }

  /**
   * The node served a header that does not verify (src/light/cursor.ts, which logs it): out of
   * rotation until the process restarts, whatever it answers. Still asked after every other
   * node has been (a read that would fail anyway), as a down one is: with verification in
   * `headers` mode an answer is a node's word either way; the mode that refuses unverified
   * answers is the answers' (docs/verified-reads.md). True when it was not lying before (the
   * caller logs the episode's one line).
   */
  lying (node: ChainNode): boolean {
    const news = !node.lying
    node.lying = true
    return news
  }

  /** Every node's index in the order pick() would try them now. */
  rotation (): number[] {
    const tried = new Set<ChainNode>()
    for (let node = this.pick(tried); node !== undefined; node = this.pick(tried)) tried.add(node)
    return [...tried].map((node) => node.index)
  }

  /**
   * The node refused a read for its load (429, gRPC ResourceExhausted): skipped until
   * `retryAfterMs` from now (its Retry-After; the initial backoff when it gave none). Apart
   * from its health: no answer, probe or poll ends the window sooner, and interleaved 200s
   * (a token bucket letting some through) do not flap it. One warn line per episode.
   */
  rateLimited (node: ChainNode, retryAfterMs: number | undefined): void {
    const now = this.#clock.now()
    const until = now + (retryAfterMs ?? this.#initialMs)
    if (!this.#rateLimited(node, now)) this.#log.warn({ node: node.url, retryInMs: Math.round(until - now) }, 'chain node rate-limited; skipped until its Retry-After')
    node.rateLimitedUntil = Math.max(node.rateLimitedUntil, until)
  }

  /** The node answered (anything but a transport failure): if it was down, it is back. */
  answered (node: ChainNode): void {
    node.overtaken = 0
    const down = node.down
    if (down === undefined) return
    down.cancel?.()
    node.down = undefined
    this.#log.info({ node: node.url, downMs: Math.round(this.#clock.now() - down.since) }, 'chain node up')
  }

  /**
   * A hedge sent to another node answered while this node's read was still unanswered: the
   * node is tried after the others for OVERTAKEN_DEMOTES_MS, and is down after
   * OVERTAKEN_IN_A_ROW of these without an answer between.
   */
  overtaken (node: ChainNode): void {
    node.demotedUntil = this.#clock.now() + OVERTAKEN_DEMOTES_MS
    if (++node.overtaken < OVERTAKEN_IN_A_ROW) return
    node.overtaken = 0
    this.failed(node, `overtaken by hedges ${OVERTAKEN_IN_A_ROW} times in a row without answering`)
  }

  /**
   * The node refused, dropped the connection, did not answer in time or refused the read for
   * its load: skip it, probe it later (after `retryAfterMs`, the node's own Retry-After, when
   * it gave one; then a growing interval).
   */
  failed (node: ChainNode, reason: string, retryAfterMs?: number): void {
    // Already down: its own probe schedule decides when to look again.
    if (node.down !== undefined || this.#closed) return
    const retryMs = retryAfterMs ?? this.#initialMs
    node.down = { since: this.#clock.now(), retryMs }
    // A single node is asked by every read anyway (nothing to skip it for): no probes of its
    // own, which keeps a down chain at readiness's one probe per cache period.
    const probing = this.all.length > 1
    this.#log.warn({ node: node.url, reason, ...(probing ? { retryInMs: retryMs } : {}) }, 'chain node down')
    if (probing) this.#schedule(node, node.down)
  }

  /** Stops probing and closes every node's pool (once). */
  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    for (const node of this.all) node.down?.cancel?.()
    await Promise.all(this.all.map(async (node) => node.pool.close()))
  }

  #rateLimited (node: ChainNode, now: number): boolean {
    return now < node.rateLimitedUntil
  }

  /** Negative when `a` should be tried before `b` at `now`. */
  #rank (a: ChainNode, b: ChainNode, suits: (node: ChainNode) => boolean, now: number): number {
    if (a.lying !== b.lying) return a.lying ? 1 : -1
    const byLimit = Number(this.#rateLimited(a, now)) - Number(this.#rateLimited(b, now))
    if (byLimit !== 0) return byLimit
    return rank(a, b, suits, now)
  }

  #schedule (node: ChainNode, down: Down): void {
    // A pending probe never keeps the process alive (the clock's timers do not).
    down.cancel = this.#clock.after(down.retryMs, () => { this.#reprobe(node, down) })
  }

  async #reprobe (node: ChainNode, down: Down): Promise<void> {
    await this.#probe(node).catch(() => {})
    // Back up (answered) or down again with a fresh schedule while the probe ran: nothing to do.
    if (node.down !== down || this.#closed) return
    down.retryMs = Math.min(down.retryMs * 2, this.#maxMs)
    this.#schedule(node, down)
  }
}

const always = (): boolean => true

/** The longest a node's Retry-After keeps it skipped: a node back sooner is probed back sooner anyway. */
export const MAX_RETRY_AFTER_MS = 60_000

/**
 * A Retry-After header (RFC 9110 §10.2.3: seconds, or an HTTP-date) in milliseconds from
 * `now`, at most MAX_RETRY_AFTER_MS; undefined when absent, unreadable or already past.
 * `now` is wall-clock time, not the Clock's: an HTTP-date is a date, and the Clock is monotonic.
 */
export function retryAfterMs (header: string | string[] | undefined, now = Date.now()): number | undefined {
  // Node joins no Retry-After: a repeated one arrives as its first.
  if (typeof header !== 'string') return undefined
  const value = header.trim()
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now
  if (!Number.isFinite(ms) || ms <= 0) return undefined
  return Math.min(ms, MAX_RETRY_AFTER_MS)
}

/** Negative when `a` should be tried before `b` at `now`. */
function rank (a: ChainNode, b: ChainNode, suits: (node: ChainNode) => boolean, now: number): number {
  if (a.healthy !== b.healthy) return a.healthy ? -1 : 1
  const bySuit = Number(suits(b)) - Number(suits(a))
  if (bySuit !== 0) return bySuit
  if (a.down !== undefined && b.down !== undefined && a.down.retryMs !== b.down.retryMs) return a.down.retryMs - b.down.retryMs
  const byDemotion = Number(a.demotedUntil > now) - Number(b.demotedUntil > now)
  if (byDemotion !== 0) return byDemotion
  if (a.inFlight !== b.inFlight) return a.inFlight - b.inFlight
  return a.index - b.index
}
