import pLimit, { type LimitFunction } from 'p-limit'
import type { Pool } from 'undici'
import {
  ChainAnswerTooLargeError,
  ChainBadAnswerError,
  ChainBusyError,
  ChainHeightUnavailableError,
  ChainStatusError,
  ChainTimeoutError,
  ChainUnavailableError,
  GrpcCode,
  type HttpError
} from '../errors.js'
import { formatDuration } from '../duration.js'
import type { Clock } from './clock.js'
import { Hedging, type HedgeResult, type HedgeSkip } from './hedging.js'
import { answeredHeight, ChainHeads, HEIGHT_HEADER, isUnservableHeight } from './heights.js'
import { ChainNodes, retryAfterMs, type ChainNode, type NodeLog } from './nodes.js'

export type Query = Readonly<Record<string, string | undefined>>

/** The node's identity and versions: what readiness probes and /v1/versions reports. */
export const NODE_INFO_PATH = '/cosmos/base/tendermint/v1beta1/node_info'
/** The node's latest block: its header's height is the node's head (the head poll). */
export const LATEST_BLOCK_PATH = '/cosmos/base/tendermint/v1beta1/blocks/latest'

/** What reads the chain for one answer: pinned to one height, or each read at its node's latest. */
export interface ChainReader {
  /** The height every read is pinned to (x-cosmos-block-height); undefined: none. */
  readonly height: number | undefined
  /** GET a gateway path (already percent-encoded, see chainPath) and return its parsed JSON. */
  get (path: string, query?: Query): Promise<unknown>
}

/**
 * How one exchange with one node ended (a metrics label: few values, never an address);
 * `abandoned`: the other attempt of a hedged read answered first, this one was aborted.
 */
export type ChainOutcome = 'ok' | 'gateway_error' | 'height_unavailable' | 'timeout' | 'unavailable' | 'too_large' | 'bad_answer' | 'aborted' | 'abandoned'

/** Told of every exchange with a node (reads, their failover attempts and probes): src/metrics/ counts them. */
export interface ChainObserver {
  /** `node` is the node's 1-based position in CHAIN_REST_URL, as /readyz names it ("node 1"). */
  exchange (node: number, outcome: ChainOutcome, seconds: number): void
  /** A hedge was sent and ended so (docs/hedged-reads.md). */
  hedged? (result: HedgeResult): void
  /** A hedge was due and not sent, for this reason. */
  hedgeSkipped? (reason: HedgeSkip): void
}

const NO_OBSERVER: ChainObserver = { exchange: () => {} }

/**
 * A request's trace, as the tracer made it (src/tracing/): opaque here. A request's readers
 * carry it (get, at, latest, reader, traced, unhedged) down to each exchange of their reads,
 * which hands it back to ChainTracer.exchange; a read given none is not traced.
 */
export type ChainTrace = object

/** Traces each exchange with a node (src/tracing/); absent when tracing is off. */
export interface ChainTracer {
  /**
   * An exchange of `trace`'s request is about to be sent: the headers to send with it
   * (traceparent), and its end; undefined when it is not traced (the request has ended).
   * `hedge`: it is a hedged read's second attempt.
   */
  exchange (trace: ChainTrace, node: number, path: string, attempt: number, hedge?: boolean): TracedExchange | undefined
}

export interface TracedExchange {
  readonly headers: Readonly<Record<string, string>>
  end (outcome: ChainOutcome): void
}

export interface ChainClientOptions {
  /**
   * Base URL of the chain's REST (gRPC-gateway) API, e.g. http://node:1317; or the base URLs
   * of several nodes of one chain, in order of preference, used with failover.
   */
  readonly baseUrl: string | readonly string[]
  /** One chain request's limit, from sending it to the last byte of its body, failover included. */
  readonly timeoutMs: number
  /** Chain requests in flight at once; more wait in a bounded queue. */
  readonly concurrency: number
  /** How many may wait beyond `concurrency` before new ones are shed with 503. @default 16 × concurrency */
  readonly queueLimit?: number
  /** Share one upstream request between identical concurrent reads. @default true */
  readonly coalesce?: boolean
  /** The largest chain answer read, in bytes; beyond it the answer is cut off (502). @default 16 MiB */
  readonly maxResponseBytes?: number
  /** Where node state changes (down, up) are logged. */
  readonly log?: NodeLog
  /** Overrides of each node's undici Pool options (the benchmark compares tunings). */
  readonly pool?: Pool.Options
  /** How long a failed node is skipped before its first probe, and the most it waits between probes. @default 250 ms, 5 s */
  readonly nodeBackoff?: { readonly initialMs: number, readonly maxMs: number }
  /** Told how each exchange with a node ended and how long it took. @default none */
  readonly observer?: ChainObserver
  /** Traces each exchange (a client span, traceparent sent to the node). @default none */
  readonly tracer?: ChainTracer | undefined
  /** A node more than this many blocks behind the best head takes no latest-state reads. @default 2 */
  readonly maxNodeLag?: number
  /** The oldest a known head may be when a latest-state read starts; older, the nodes are asked. @default 1 s */
  readonly headMaxAgeMs?: number
  /** Hedged reads (docs/hedged-reads.md); off when absent, and with a single node. @default off */
  readonly hedging?: HedgingSettings
  /** The clock of the node set's probe backoff and of hedging. @default performance.now() and setTimeout */
  readonly clock?: Clock
}

export interface HedgingSettings {
  /** Hedges at most this share of reads over the window (EDGE_API_HEDGE); 0: no hedging. */
  readonly budget: number
  /** The shortest delay before a hedge (EDGE_API_HEDGE_MIN_DELAY). */
  readonly minDelayMs: number
  /** The longest. @default MAX_HEDGE_DELAY_MS, and never beyond half the chain timeout */
  readonly maxDelayMs?: number
  /** The budget's window. @default 10 s */
  readonly windowMs?: number
  /** Whether the replica is shedding requests: no hedges meanwhile. @default never */
  readonly shedding?: () => boolean
}

/**
 * The longest a read waits before it is hedged, however slow its node has been: a gateway
 * answers most reads in milliseconds, and a hedge later than this would rescue little.
 */
export const MAX_HEDGE_DELAY_MS = 1000

/** The budget of a probe that asks a node that is down whether it is back (as readiness's). */
const REPROBE_TIMEOUT_MS = 2000

/**
 * The head poll's own budget per node, never the chain timeout: a read waits for two rounds of
 * it at most before it goes unpinned (issue 33), 1 s, where a healthy node answers its latest
 * block in milliseconds.
 */
export const HEAD_POLL_TIMEOUT_MS = 500

/** A chain answer and the height the node says it answered at. */
interface Answer {
  readonly value: unknown
  readonly height: number | undefined
}

/**
 * Pins an answer's reads to the height its first read is answered at: the first goes to a
 * node at its latest height, and every later one (waiting for the first) at that height.
 */
class FirstAnswerPin implements ChainReader {
  readonly #client: ChainClient
  readonly #trace: ChainTrace | undefined
  #height: number | undefined
  #first: Promise<unknown> | undefined

  constructor (client: ChainClient, trace: ChainTrace | undefined) {
    this.#client = client
    this.#trace = trace
  }

  get height (): number | undefined {
    return this.#height
  }

  async get (path: string, query?: Query): Promise<unknown> {
    if (this.#height !== undefined) return this.#client.get(path, query, this.#height, this.#trace)
    if (this.#first !== undefined) {
      await this.#first.catch(() => {})
      return this.get(path, query)
    }
    const first = this.#client.readLatest(path, query, this.#trace)
    this.#first = first
    try {
      const answer = await first
      // A node that does not tell its height leaves the answer unpinned, as before heights.
      this.#height = answer.height
      return answer.value
    } finally {
      if (this.#height === undefined) this.#first = undefined
    }
  }
}

interface LatestBlock { block?: { header?: { height?: unknown } | null } | null }

/** One exchange with one node: its answer, or why not, and whether another node may be asked. */
type Outcome =
  | { readonly ok: true, readonly value: unknown, readonly height?: number | undefined }
  | { readonly ok: false, readonly error: HttpError, readonly tryNext: boolean }

/** The abort reason of a hedged read's attempt that lost the race. */
const ABANDONED = new Error('the other attempt of this hedged read answered first')

/** One attempt of a read on one node, abortable on its own (the loser of a hedged read). */
interface Attempt {
  readonly node: ChainNode
  readonly hedge: boolean
  /** When it was sent, on the hedging clock. */
  readonly sent: number
  readonly controller: AbortController
  readonly ended: Promise<{ readonly attempt: Attempt, readonly outcome: Outcome }>
}

/**
 * Reads JSON from the chain's REST gateway. Bounded (p-limit + a bounded queue), timed out,
 * size-capped, abortable as a whole at shutdown, and coalescing: concurrent identical reads
 * share one upstream request and one parsed result. Results are shared, so callers must not
 * mutate them. With several nodes, a read whose node refuses or drops the connection is
 * retried at once on the next node, within the same timeout (src/chain/nodes.ts chooses).
 * The limiter and coalescing sit above the choice of node: they bound reads, not attempts.
 */
export class ChainClient implements ChainReader {
  /** Unpinned: each read at its node's latest height (pin with at() or latest()). */
  readonly height = undefined
  /** Each node's head and the height latest-state answers are served at (src/chain/heights.ts). */
  readonly heads: ChainHeads
  readonly #timeoutMs: number
  readonly #queueLimit: number
  readonly #coalesce: boolean
  readonly #maxResponseBytes: number
  readonly #nodes: ChainNodes
  readonly #limit: LimitFunction
  readonly #pending = new Map<string, Promise<Answer>>()
  readonly #inFlight = new Set<AbortController>()
  readonly #observer: ChainObserver
  readonly #tracer: ChainTracer | undefined
  readonly #hedging: Hedging | undefined
  readonly #shedding: () => boolean
  readonly #unhedged: ChainReader

  constructor (options: ChainClientOptions) {
    const urls = typeof options.baseUrl === 'string' ? [options.baseUrl] : options.baseUrl
    this.#timeoutMs = options.timeoutMs
    this.#queueLimit = options.queueLimit ?? 16 * options.concurrency
    this.#coalesce = options.coalesce ?? true
    this.#maxResponseBytes = options.maxResponseBytes ?? 16 * 1024 * 1024
    this.#limit = pLimit(options.concurrency)
    this.#observer = options.observer ?? NO_OBSERVER
    this.#tracer = options.tracer
    this.#nodes = new ChainNodes({
      urls,
      // One connection per request the limiter lets through, so undici never queues behind
      // p-limit's back; no pipelining, because one slow chain answer would stall the ones
      // behind it. Idle sockets live 4 s, under the gateway's usual idle timeout. undici cuts
      // an answer off at maxResponseSize (chunked or not) and destroys its socket.
      pool: {
        connections: options.concurrency,
        pipelining: 1,
        keepAliveTimeout: 4000,
        maxResponseSize: this.#maxResponseBytes,
        ...options.pool
      },
      probe: (node) => this.probe(NODE_INFO_PATH, REPROBE_TIMEOUT_MS, node.index),
      log: options.log,
      backoff: options.nodeBackoff,
      clock: options.clock
    })
    const hedging = options.hedging
    // A single node has nobody to hedge to.
    this.#hedging = hedging === undefined || hedging.budget <= 0 || urls.length < 2
      ? undefined
      : new Hedging({
        budget: hedging.budget,
        minDelayMs: hedging.minDelayMs,
        maxDelayMs: Math.min(hedging.maxDelayMs ?? MAX_HEDGE_DELAY_MS, options.timeoutMs / 2),
        nodeCount: urls.length,
        windowMs: hedging.windowMs,
        clock: options.clock
      })
    this.#shedding = hedging?.shedding ?? (() => false)
    this.#unhedged = this.#unhedgedReader(undefined)
    this.heads = new ChainHeads({
      nodeCount: urls.length,
      maxLag: options.maxNodeLag ?? 2,
      maxAgeMs: options.headMaxAgeMs ?? 1000,
      poll: async (trace) => this.#pollHeads(trace),
      log: options.log,
      urls
    })
  }

  /** How many chain nodes there are (readiness probes each). */
  get nodeCount (): number {
    return this.#nodes.all.length
  }

  /**
   * GET a gateway path (already percent-encoded, see chainPath) and return its parsed JSON;
   * at `height` when given (x-cosmos-block-height), from a node that is not lagging.
   */
  async get (path: string, query: Query = {}, height?: number, trace?: ChainTrace): Promise<unknown> {
    return (await this.#answer(path, query, height, false, true, trace)).value
  }

  /** A reader whose every read is pinned to `height` (and traced as `trace`'s). */
  at (height: number, trace?: ChainTrace): ChainReader {
    return { height, get: async (path, query) => this.get(path, query, height, trace) }
  }

  /**
   * A reader pinned to the height latest-state answers are served at now, asking the nodes if
   * need be (ChainHeads.latest; a poll it starts is `trace`'s). No head confirmed (no node
   * tells its height, the head poll fails or hangs): pinned to the height its first read is
   * answered at if the node tells it, else unpinned, as the Go service read (issue 33).
   */
  async latest (trace?: ChainTrace): Promise<ChainReader> {
    const height = await this.heads.latest(trace)
    return height === undefined ? new FirstAnswerPin(this, trace) : this.at(height, trace)
  }

  /** Unpinned reads traced as `trace`'s: this client itself when there is no trace (tracing off, nothing allocated). */
  traced (trace: ChainTrace | undefined): ChainReader {
    return trace === undefined ? this : { height: undefined, get: async (path, query) => this.get(path, query, undefined, trace) }
  }

  /** Reads that are not hedged (the optional verify routes' heavy reads, see consensus.ts), traced as `trace`'s. */
  unhedged (trace?: ChainTrace): ChainReader {
    return trace === undefined ? this.#unhedged : this.#unhedgedReader(trace)
  }

  #unhedgedReader (trace: ChainTrace | undefined): ChainReader {
    return { height: undefined, get: async (path, query = {}) => (await this.#answer(path, query, undefined, false, false, trace)).value }
  }

  /**
   * A reader for one latest-state answer without an answer cache. With one node: pinned to
   * the height its first read is answered at (never below one served before), so the chain
   * is asked nothing but the answer's own reads. With several: pinned to the best head
   * (latest()), whose poll also tells which node lags.
   */
  async reader (trace?: ChainTrace): Promise<ChainReader> {
    return this.nodeCount === 1 ? new FirstAnswerPin(this, trace) : this.latest(trace)
  }

  /**
   * A latest-state read at the node's own latest height, from a node that is not lagging;
   * with the height it was answered at, raised to the served height if the node was behind it.
   */
  async readLatest (path: string, query: Query = {}, trace?: ChainTrace): Promise<Answer> {
    const answer = await this.#answer(path, query, undefined, true, true, trace)
    if (answer.height === undefined) return answer
    const served = this.heads.serve(answer.height)
    if (served === answer.height) return answer
    return { value: await this.get(path, query, served, trace), height: served }
  }

  // `trace` goes with the read down to each of its exchanges (#exchange). A coalesced read
  // keeps the trace of the request that started it: its spans are that request's.
  #answer (path: string, query: Query, height: number | undefined, latest: boolean, hedged: boolean, trace: ChainTrace | undefined): Promise<Answer> {
    const target = path + queryString(query)
    if (!this.#coalesce) return this.#limited(target, height, latest, hedged, trace)
    // One upstream read, hedged at most once, however many share it; an unhedged read never
    // joins a hedged one.
    const key = `${hedged ? '' : '!'}${height ?? (latest ? 'latest' : '')} ${target}`
    const shared = this.#pending.get(key)
    if (shared !== undefined) return shared
    const request = this.#limited(target, height, latest, hedged, trace).finally(() => this.#pending.delete(key))
    this.#pending.set(key, request)
    return request
  }

  /** GET from one node (the first by default), outside the limiter and without coalescing, under its own budget (readiness probes; the head poll, traced as the request's that started it). */
  async probe (path: string, timeoutMs: number, node = 0, trace?: ChainTrace): Promise<unknown> {
    const chosen = this.#nodes.all[node]
    if (chosen === undefined) throw new RangeError(`no chain node ${node}; there are ${this.nodeCount}`)
    const outcome = await this.#deadline(timeoutMs, (signal, timedOut) => this.#exchange(chosen, path, signal, timedOut, timeoutMs, 1, trace))
    if (outcome.ok) return outcome.value
    throw outcome.error
  }

  /** Whether each node (in CHAIN_REST_URL order) is taking reads: false while it is skipped as down. */
  get nodesUp (): boolean[] {
    return this.#nodes.all.map((node) => node.healthy)
  }

  /** Reads waiting for a slot of the limiter (EDGE_API_CHAIN_CONCURRENCY), coalesced ones counted once. */
  get queued (): number {
    return this.#limit.pendingCount
  }

  /** Chain requests currently sent and not yet answered. */
  get inFlight (): number {
    return this.#inFlight.size
  }

  /** Aborts every chain request in flight (forced shutdown); their callers get 503. */
  abortAll (): void {
    for (const controller of this.#inFlight) controller.abort(new Error('edge-api is shutting down'))
  }

  async close (): Promise<void> {
    await this.#nodes.close()
  }

  /** Asks every healthy node (every node, when none is) for its latest block; true when any told its height. */
  async #pollHeads (trace: ChainTrace | undefined): Promise<void> {
    const healthy = this.#nodes.all.filter((node) => node.healthy)
    const asked = healthy.length > 0 ? healthy : this.#nodes.all
    await Promise.all(asked.map(async (node) => {
      try {
        const answer = await this.probe(LATEST_BLOCK_PATH, Math.min(this.#timeoutMs, HEAD_POLL_TIMEOUT_MS), node.index, trace) as LatestBlock | null
        const height = Number(answer?.block?.header?.height)
        // An answer without a height confirms nothing.
        if (Number.isSafeInteger(height) && height >= 1) this.heads.observe(node.index, height, true)
      } catch {
        // Down, or not answering: the probe has already reported it to the node set.
      }
    }))
  }

  #limited (target: string, height: number | undefined, latest: boolean, hedged: boolean, trace: ChainTrace | undefined): Promise<Answer> {
    // Counted as admitted work, not p-limit's pendingCount alone: a request that has a free
    // slot still counts as pending for one microtask, so `queueLimit: 0` would shed it.
    const admitted = this.#limit.activeCount + this.#limit.pendingCount
    if (admitted >= this.#limit.concurrency + this.#queueLimit) return Promise.reject(new ChainBusyError())
    return this.#limit(() => this.#read(target, height, latest, hedged, trace))
  }

  /**
   * One read: the preferred node, then at once the next one while a node fails to connect,
   * drops the connection or cannot serve the height. A latest-state read (pinned, or at the
   * node's latest) skips lagging nodes; a pinned one tries first the nodes known to have its height.
   * With hedging, a node that has not answered after its delay gets a second attempt on
   * another node, at the same height; the first answer wins and the other is aborted.
   */
  async #read (target: string, height: number | undefined, latest: boolean, hedged: boolean, trace: ChainTrace | undefined): Promise<Answer> {
    const outcome = await this.#deadline(this.#timeoutMs, async (signal, timedOut) => {
      const tried = new Set<ChainNode>(height === undefined && !latest ? [] : this.#nodes.all.filter((n) => this.heads.lagging(n.index)))
      const suits = height === undefined ? undefined : (n: ChainNode) => this.heads.head(n.index) >= height
      // Never undefined: the node with the best head is never lagging.
      const first = this.#nodes.pick(tried, suits) as ChainNode
      const hedging = hedged ? this.#hedging : undefined
      if (hedging === undefined) return this.#failover(first, tried, suits, target, height, trace, signal, timedOut)
      hedging.read()
      return this.#hedged(hedging, first, tried, suits, target, height, trace, signal, timedOut)
    })
    if (outcome.ok) return { value: outcome.value, height: outcome.height }
    throw outcome.error
  }

  /** A read's attempts one after the other: the next node only when one fails to answer. */
  async #failover (first: ChainNode, tried: Set<ChainNode>, suits: ((n: ChainNode) => boolean) | undefined, target: string, height: number | undefined, trace: ChainTrace | undefined, signal: AbortSignal, timedOut: () => boolean): Promise<Outcome> {
    let node: ChainNode | undefined = first
    let attempt = 0
    let result: Outcome
    do {
      const asked: ChainNode = node
      tried.add(asked)
      asked.inFlight++
      try {
        result = await this.#exchange(asked, target, signal, timedOut, this.#timeoutMs, ++attempt, trace, height)
      } finally {
        asked.inFlight--
      }
      node = result.ok || !result.tryNext ? undefined : this.#nodes.pick(tried, suits)
    } while (node !== undefined)
    return result
  }

  /**
   * A read with failover and one hedge at most: once the first node has not answered after
   * its delay, the same read goes to the best node not tried yet, if the budget allows. The
   * first answer (or definite error) ends the read and aborts the attempt still running; a
   * node that fails to answer while the other attempt runs leaves the read to that attempt.
   */
  async #hedged (hedging: Hedging, first: ChainNode, tried: Set<ChainNode>, suits: ((n: ChainNode) => boolean) | undefined, target: string, height: number | undefined, trace: ChainTrace | undefined, signal: AbortSignal, timedOut: () => boolean): Promise<Outcome> {
    const running = new Set<Attempt>()
    let attempts = 0
    const start = (node: ChainNode, hedge: boolean): Attempt => {
      tried.add(node)
      node.inFlight++
      const controller = new AbortController()
      // The read's deadline and abortAll reach every attempt; a lost race only its own.
      const forward = (): void => { controller.abort(signal.reason) }
      signal.addEventListener('abort', forward, { once: true })
      const sent = hedging.clock.now()
      const attempt: Attempt = {
        node,
        hedge,
        sent,
        controller,
        ended: this.#exchange(node, target, controller.signal, timedOut, this.#timeoutMs, ++attempts, trace, height, hedge).then((outcome) => {
          if (outcome.ok) hedging.answered(node.index, hedging.clock.now() - sent)
          return { attempt, outcome }
        }).finally(() => {
          node.inFlight--
          signal.removeEventListener('abort', forward)
        })
      }
      running.add(attempt)
      return attempt
    }
    start(first, false)
    // Set at once: a promise's executor runs before its constructor returns.
    let cancel!: () => void
    let due: Promise<'due'> | undefined = new Promise((resolve) => {
      cancel = hedging.clock.after(hedging.delayMs(first.index), () => { resolve('due') })
    })
    let hedge: Attempt | undefined
    try {
      for (;;) {
        const next = await Promise.race([...[...running].map(async (a) => a.ended), ...(due === undefined ? [] : [due])])
        if (next === 'due') {
          due = undefined
          // One hedge per read, beside the one attempt running (the first, or its failover).
          if (running.size === 1 && !signal.aborted) hedge = this.#sendHedge(hedging, tried, suits, start)
          continue
        }
        const { attempt, outcome } = next
        running.delete(attempt)
        const another = outcome.ok || !outcome.tryNext ? undefined : running.size > 0 ? 'waiting' : this.#nodes.pick(tried, suits)
        if (another === 'waiting') continue
        if (another !== undefined) {
          start(another, false)
          continue
        }
        if (hedge !== undefined) {
          const won = attempt === hedge && outcome.ok
          this.#observer.hedged?.(won ? 'won' : outcome.ok ? 'lost' : 'failed')
          // The attempt a hedge overtook waited its delay and the hedge's whole answer: a node
          // that keeps losing so is hanging, and is skipped as one that does not answer.
          if (won) for (const other of running) this.#nodes.overtaken(other.node)
        }
        if (outcome.ok) for (const other of running) hedging.overtaken(other.node.index, hedging.clock.now() - other.sent)
        return outcome
      }
    } finally {
      cancel()
      for (const attempt of running) attempt.controller.abort(ABANDONED)
    }
  }

  /** Sends the hedge of a read if the budget and the replica's load allow, to the best node not tried yet. */
  #sendHedge (hedging: Hedging, tried: Set<ChainNode>, suits: ((n: ChainNode) => boolean) | undefined, start: (node: ChainNode, hedge: boolean) => Attempt): Attempt | undefined {
    const node = this.#nodes.pick(tried, suits)
    // A node that is down is no better bet than the one the read waits for.
    const skip = node === undefined || !node.healthy
      ? 'no_node'
      : hedging.admit(this.#shedding() || this.#limit.pendingCount > this.#queueLimit / 2)
    if (skip !== undefined) {
      this.#observer.hedgeSkipped?.(skip)
      return undefined
    }
    return start(node as ChainNode, true)
  }

  /** Runs `work` under an abortable deadline of its own; abortAll reaches it too. */
  async #deadline (timeoutMs: number, work: (signal: AbortSignal, timedOut: () => boolean) => Promise<Outcome>): Promise<Outcome> {
    const controller = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort(new ChainTimeoutError(timeoutMs))
    }, timeoutMs)
    this.#inFlight.add(controller)
    try {
      return await work(controller.signal, () => timedOut)
    } finally {
      clearTimeout(timer)
      this.#inFlight.delete(controller)
    }
  }

  /** One request to one node (#attempt), timed, reported to the observer, and traced when it is a traced request's. */
  async #exchange (node: ChainNode, path: string, signal: AbortSignal, timedOut: () => boolean, timeoutMs: number, attempt: number, trace: ChainTrace | undefined, height?: number, hedge = false): Promise<Outcome> {
    const started = performance.now()
    const traced = trace === undefined ? undefined : this.#tracer?.exchange(trace, node.index + 1, path, attempt, hedge)
    const outcome = await this.#attempt(node, path, signal, timedOut, timeoutMs, height, traced?.headers)
    const label = outcomeLabel(outcome, signal, timedOut)
    this.#observer.exchange(node.index + 1, label, (performance.now() - started) / 1000)
    traced?.end(label)
    return outcome
  }

  /**
   * One request to one node, its body read to the end (an unread body holds its socket) or
   * cut off at the size limit. Reports the node's health: any answer means it is up; a
   * refused, dropped or timed-out exchange means it is down. Reports the height it answered at.
   */
  async #attempt (node: ChainNode, path: string, signal: AbortSignal, timedOut: () => boolean, timeoutMs: number, height: number | undefined, traceHeaders?: Readonly<Record<string, string>>): Promise<Outcome> {
    const target = node.prefix + path
    let statusCode: number
    let text: string
    let answered: number | undefined
    let retryAfter: string | string[] | undefined
    try {
      const answer = await node.pool.request({
        origin: node.origin,
        path: target,
        method: 'GET',
        headers: requestHeaders(height, traceHeaders),
        signal
      })
      statusCode = answer.statusCode
      retryAfter = answer.headers['retry-after']
      answered = answeredHeight(answer.headers)
      if (answered !== undefined) this.heads.observe(node.index, answered, height === undefined)
      // A declared length over the limit is refused before reading a byte; destroying the
      // unread body closes the socket. Chunked answers are cut off by undici (maxResponseSize).
      const declared = Number(answer.headers['content-length'])
      if (declared > this.#maxResponseBytes) {
        answer.body.destroy()
        this.#nodes.answered(node)
        return { ok: false, error: new ChainAnswerTooLargeError(this.#maxResponseBytes, `${node.url} answered ${statusCode} with content-length ${declared} for ${path}`), tryNext: false }
      }
      text = await answer.body.text()
    } catch (err) {
      if (timedOut()) {
        this.#failed(node, path, `no answer within ${formatDuration(timeoutMs)}`)
        return { ok: false, error: new ChainTimeoutError(timeoutMs), tryNext: false }
      }
      // abortAll: shutting down, not the node's fault.
      if (signal.aborted) return { ok: false, error: new ChainUnavailableError(signal.reason), tryNext: false }
      if ((err as { code?: unknown }).code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
        this.#nodes.answered(node)
        return { ok: false, error: new ChainAnswerTooLargeError(this.#maxResponseBytes, `${node.url} answered more for ${path}`), tryNext: false }
      }
      // Refused, reset, closed mid-answer, name not resolved: this node cannot be reached.
      this.#failed(node, path, describe(err))
      return { ok: false, error: new ChainUnavailableError(err), tryNext: true }
    }
    const outcome = parseAnswer(statusCode, text, `${node.url}${path}`, answered)
    // A height this node cannot serve (behind, pruned) is its failure: the next node may have
    // it, and the node is up all the same. When edge-api chose the height (a pinned read), no
    // node having it is a 503, never the client's fault; a height the client put in the path
    // keeps the gateway's own answer.
    if (!outcome.ok && outcome.error instanceof ChainStatusError && isUnservableHeight(outcome.error.message)) {
      this.#nodes.answered(node)
      const error = height === undefined ? outcome.error : new ChainHeightUnavailableError(`${node.url}${path}: ${outcome.error.message}`)
      return { ok: false, error, tryNext: true }
    }
    // A non-2xx answer that is not the gateway speaking (a proxy's error page) stands for a
    // node that is not there: like a refused connection. So does a node refusing the read for
    // its load (parseAnswer: a 429, gRPC ResourceExhausted): skipped for its Retry-After.
    if (!outcome.ok && outcome.tryNext) this.#failed(node, path, `answered ${statusCode}${outcome.error instanceof ChainStatusError ? ` (rate-limited: ${outcome.error.message})` : ' without a gateway error body'}`, retryAfterMs(retryAfter))
    else this.#nodes.answered(node)
    return outcome
  }

  /**
   * The node failed an exchange: it is skipped as down, unless the exchange was the head
   * poll's. A node whose blocks/latest a proxy filters out, or hangs, may answer every query:
   * the poll tells its head, the reads and readiness tell its health (issue 33).
   */
  #failed (node: ChainNode, path: string, reason: string, retryAfterMs?: number): void {
    if (path !== LATEST_BLOCK_PATH) this.#nodes.failed(node, reason, retryAfterMs)
  }
}

/** The outcome label of one exchange; abortAll (shutting down) is told apart from a node that cannot be reached. */
function outcomeLabel (outcome: Outcome, signal: AbortSignal, timedOut: () => boolean): ChainOutcome {
  if (outcome.ok) return 'ok'
  if (outcome.error instanceof ChainUnavailableError && signal.aborted && !timedOut()) return signal.reason === ABANDONED ? 'abandoned' : 'aborted'
  return chainOutcome(outcome.error)
}

/** The outcome label of a chain error (readiness labels its probes with it too). */
export function chainOutcome (error: unknown): ChainOutcome {
  if (error instanceof ChainStatusError) return 'gateway_error'
  if (error instanceof ChainHeightUnavailableError) return 'height_unavailable'
  if (error instanceof ChainTimeoutError) return 'timeout'
  if (error instanceof ChainAnswerTooLargeError) return 'too_large'
  if (error instanceof ChainBadAnswerError) return 'bad_answer'
  return 'unavailable'
}

function parseAnswer (statusCode: number, text: string, where: string, height: number | undefined): Outcome {
  if (statusCode >= 200 && statusCode < 300) {
    try {
      return { ok: true, value: JSON.parse(text), height }
    } catch (err) {
      return { ok: false, error: new ChainBadAnswerError(`chain answered ${statusCode} with a body that is not JSON for ${where}: ${(err as Error).message}`), tryNext: false }
    }
  }
  let error: unknown
  try {
    error = JSON.parse(text)
  } catch {}
  // A node that rate-limits (429, gRPC ResourceExhausted) is overloaded, not the client at
  // fault: the read goes to another node at once (issue 33). The client gets the 429 only
  // when every node refused it.
  if (statusCode === 429 || (isGatewayError(error) && error.code === GrpcCode.ResourceExhausted)) {
    const message = isGatewayError(error) ? error.message : 'chain node rate-limited this read'
    return { ok: false, error: new ChainStatusError(GrpcCode.ResourceExhausted, message), tryNext: true }
  }
  if (isGatewayError(error)) return { ok: false, error: new ChainStatusError(error.code, error.message), tryNext: false }
  return { ok: false, error: new ChainUnavailableError(`chain answered ${statusCode} without a gateway error body for ${where}`), tryNext: true }
}

/** A transport failure in one line for the log (undici's and Node's socket errors all carry a code). */
function describe (err: unknown): string {
  const { message, code } = err as NodeJS.ErrnoException
  return `${message} (${code})`
}

function isGatewayError (value: unknown): value is { code: number, message: string } {
  const v = value as { code?: unknown, message?: unknown } | null | undefined
  return typeof v?.code === 'number' && typeof v.message === 'string'
}

function queryString (query: Query): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.append(key, value)
  }
  const text = params.toString()
  return text === '' ? '' : `?${text}`
}

/**
 * Builds a gateway path, percent-encoding every interpolated value as one path segment,
 * so nothing a client sends can change which path is queried (no "..", "/", "?" or "#").
 */
export function chainPath (strings: TemplateStringsArray, ...values: Array<string | number | bigint>): string {
  let path = strings[0] as string
  values.forEach((value, i) => {
    path += encodeSegment(String(value)) + (strings[i + 1] as string)
  })
  return path
}

function encodeSegment (value: string): string {
  // encodeURIComponent leaves "." alone; "." and ".." segments would still walk the path.
  return encodeURIComponent(value).replace(/\./g, '%2E')
}

/** A chain request's headers: the height it is pinned to, and the trace context when traced. */
function requestHeaders (height: number | undefined, traceHeaders: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const headers: Record<string, string> = height === undefined ? { accept: 'application/json' } : { accept: 'application/json', [HEIGHT_HEADER]: String(height) }
  return traceHeaders === undefined ? headers : { ...headers, ...traceHeaders }
}
