import type { Pool } from 'undici'
import { REAL_CLOCK, type Clock } from '../clock.js'
import { followingCursor, type VerificationOptions, type VerifiedCursor } from '../light/cursor.js'
import { Deadlines } from './deadline.js'
import { NodeExchange } from './exchange.js'
import { NodeChoice } from './failover.js'
import { HedgedReads, type HedgingSettings } from './hedged-read.js'
import { ChainHeads } from './heights.js'
import { ChainNodes, type ChainNode, type NodeLog } from './nodes.js'
import { LATEST_BLOCK_PATH, NODE_INFO_PATH, withQuery } from './paths.js'
import { HEAD_POLL_TIMEOUT_MS, Pinning, pollHeads } from './pinning.js'
import { ReadFront } from './read-front.js'
import { RpcEndpoints } from './rpc-endpoints.js'
import { NO_CONTEXT, NO_OBSERVER, type Answer, type ChainObserver, type ChainReader, type ChainTrace, type ChainTracer, type Query, type ReadContext, type ReadRequest } from './types.js'

export type { VerificationOptions } from '../light/cursor.js'
// src/tracing/ imports these from here; their home is types.ts (the tracing rework moves the imports).
export type { ChainOutcome, ChainTrace, ChainTracer, TracedExchange } from './types.js'

export interface ChainClientOptions {
  /** The chain's REST (gRPC-gateway) base URL (http://node:1317), or several nodes' of one chain in order of preference. */
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
  /** The clock of the node set's probe backoff, of hedging and of the heads' ages. @default REAL_CLOCK */
  readonly clock?: Clock
  /** Follow the chain's headers from this trust root (EDGE_API_VERIFICATION not off; docs/verified-reads.md). @default off */
  readonly verification?: VerificationOptions | undefined
}

/** The budget of a probe that asks a node that is down whether it is back (as readiness's). */
const REPROBE_TIMEOUT_MS = 2000

/**
 * Reads JSON from the chain's REST gateway, composed as a stack (docs/layout.md, src/chain/):
 * the front bounds and coalesces reads (read-front.ts); each read under its deadline
 * (deadline.ts) chooses its nodes and fails over (failover.ts) or races a hedge (hedged-read.ts);
 * each attempt is one exchange with one node (exchange.ts): timed out, size-capped, its
 * answer parsed, the node's health and head told. Pinned readers and the head poll are
 * pinning.ts's; the heads heights.ts's. Abortable as a whole at shutdown (abortAll).
 */
export class ChainClient implements ChainReader {
  /** Unpinned: each read at its node's latest height (pin with at() or latest()). */
  readonly height = undefined
  /** Each node's head and the height latest-state answers are served at (src/chain/heights.ts). */
  readonly heads: ChainHeads
  /** The clock of backoff, hedging and the heads' ages; what times a wait for the heads (src/cache/min-height.ts). */
  readonly clock: Clock
  /** The verified-height cursor, following the head poll's blocks; undefined when verification is off. */
  readonly verified: VerifiedCursor | undefined
  readonly #timeoutMs: number
  readonly #nodes: ChainNodes
  readonly #deadlines: Deadlines
  readonly #exchange: NodeExchange
  readonly #choice: NodeChoice
  readonly #hedged: HedgedReads | undefined
  readonly #front: ReadFront
  readonly #pinning: Pinning
  readonly #unhedged: ChainReader
  #rpc: RpcEndpoints | undefined // the nodes' CometBFT RPC (EDGE_API_CHAIN_RPC_URL), read by the cursor alone
  #closed = false
  #stopPolling: () => void = () => {}

  constructor (options: ChainClientOptions) {
    const urls = typeof options.baseUrl === 'string' ? [options.baseUrl] : options.baseUrl
    const maxResponseBytes = options.maxResponseBytes ?? 16 * 1024 * 1024
    const observer = options.observer ?? NO_OBSERVER
    this.#timeoutMs = options.timeoutMs
    this.clock = options.clock ?? REAL_CLOCK
    // The chain timeout and an exchange's duration bound and time real socket I/O: on the real
    // clock whatever `clock` is (a test's manual clock would never time a hanging node out).
    this.#deadlines = new Deadlines(REAL_CLOCK)
    this.#nodes = new ChainNodes({
      urls,
      pool: poolOptions(options, maxResponseBytes),
      probe: async (node) => this.probe(NODE_INFO_PATH, REPROBE_TIMEOUT_MS, node.index),
      log: options.log,
      backoff: options.nodeBackoff,
      clock: this.clock
    })
    this.verified = this.#cursor(options.verification, urls, maxResponseBytes)
    const pollTimeoutMs = Math.min(this.#timeoutMs, HEAD_POLL_TIMEOUT_MS)
    const headMaxAgeMs = options.headMaxAgeMs ?? 1000
    this.heads = new ChainHeads({
      nodeCount: urls.length,
      maxLag: options.maxNodeLag ?? 2,
      maxAgeMs: headMaxAgeMs,
      poll: async (trace) => pollHeads({ nodes: this.#nodes, heads: this.heads, ask: async (node, trace) => this.#askHead(node, pollTimeoutMs, trace), told: this.verified === undefined ? undefined : (node, answer) => this.verified?.told(node, answer) }, trace),
      pollTimeoutMs,
      log: options.log,
      urls,
      clock: this.clock
    })
    this.#exchange = new NodeExchange({ nodes: this.#nodes, heads: this.heads, maxResponseBytes, observer, tracer: options.tracer, clock: REAL_CLOCK })
    this.#choice = new NodeChoice({ nodes: this.#nodes, heads: this.heads, exchange: this.#exchange })
    this.#front = new ReadFront({
      concurrency: options.concurrency,
      queueLimit: options.queueLimit ?? 16 * options.concurrency,
      coalesce: options.coalesce ?? true,
      read: async (request) => this.#read(request)
    })
    this.#hedged = HedgedReads.create({
      settings: options.hedging,
      nodes: this.#nodes,
      timeoutMs: this.#timeoutMs,
      crowded: () => this.#front.crowded,
      observer,
      clock: this.clock
    })
    this.#pinning = new Pinning({ heads: this.heads, answer: async (request) => this.#front.answer(request) })
    this.#unhedged = this.#unhedgedReader(NO_CONTEXT)
    if (this.verified !== undefined) this.#pollForCursor(headMaxAgeMs)
  }

  /** The cursor's reads are probes (outside the limiter, under the chain timeout), its RPC reads too; a liar is out of rotation. */
  #cursor (verification: VerificationOptions | undefined, urls: readonly string[], maxResponseBytes: number): VerifiedCursor | undefined {
    if (verification === undefined) return undefined
    this.#rpc = RpcEndpoints.create(verification.rpcUrls, maxResponseBytes)
    return followingCursor(verification, urls, async (node, path) => this.probe(path, this.#timeoutMs, node), (node) => { this.#nodes.lying(this.#nodes.all[node] as ChainNode) }, this.#rpc?.reads(this.#deadlines, this.#timeoutMs))
  }

  /** A verifying replica also polls every EDGE_API_HEAD_MAX_AGE while idle, so V keeps up without traffic (joins a round in flight). */
  #pollForCursor (intervalMs: number): void {
    const tick = (): void => {
      this.heads.poll().finally(() => {
        if (!this.#closed) this.#stopPolling = this.clock.after(intervalMs, tick)
      })
    }
    this.#stopPolling = this.clock.after(intervalMs, tick)
  }

  /** How many chain nodes there are (readiness probes each). */
  get nodeCount (): number {
    return this.#nodes.all.length
  }

  /**
   * GET a gateway path (already percent-encoded, see chainPath) and return its parsed JSON;
   * at `height` when given (x-cosmos-block-height), from a node that is not lagging.
   */
  async get (path: string, query: Query = {}, height?: number, context: ReadContext = NO_CONTEXT): Promise<unknown> {
    return (await this.#front.answer({ target: withQuery(path, query), height, hedged: true, trace: context.trace, client: context.client })).value
  }

  /** A reader whose every read is pinned to `height`, its reads `context`'s (traced, queued as its client's). */
  at (height: number, context: ReadContext = NO_CONTEXT): ChainReader {
    return this.#pinning.at(height, context)
  }

  /** A reader pinned to the height latest-state answers are served at now, asking the nodes if need be (ChainHeads.latest; a poll it starts is traced as `context`'s). */
  async latest (context: ReadContext = NO_CONTEXT): Promise<ChainReader> {
    return this.#pinning.latest(context)
  }

  /** Unpinned reads of `context`'s request (its trace, its client's place in the read queue). */
  unpinned (context: ReadContext): ChainReader {
    return { height: undefined, get: async (path, query) => this.get(path, query, undefined, context) }
  }

  /** Reads that are not hedged (the optional verify routes' heavy reads, see consensus.ts), `context`'s. */
  unhedged (context?: ReadContext): ChainReader {
    return context === undefined ? this.#unhedged : this.#unhedgedReader(context)
  }

  /**
   * Reads of node `index` (CHAIN_REST_URL's order) alone, no failover or hedging, at `height` when given: reads whose
   * answer judges the node that gave it (src/proven/). Limited, coalesced, timed out, counted and traced as every read.
   */
  fromNode (index: number, context: ReadContext = NO_CONTEXT, height?: number): ChainReader {
    if (this.#nodes.all[index] === undefined) throw new RangeError(`no chain node ${index}; there are ${this.nodeCount}`)
    return { height, get: async (path, query = {}) => (await this.#front.answer({ target: withQuery(path, query), height, hedged: false, node: index, trace: context.trace, client: context.client })).value }
  }

  /** The nodes (CHAIN_REST_URL indexes) in the order a read tries them now, a liar last; `lied(i)`: out of rotation, its URL when new (src/proven/). */
  get rotation (): { readonly order: number[], readonly lied: (index: number) => string | undefined } {
    return { order: this.#nodes.rotation(), lied: (index) => { const node = this.#nodes.all[index] as ChainNode; return this.#nodes.lying(node) ? node.url : undefined } }
  }

  #unhedgedReader (context: ReadContext): ChainReader {
    return { height: undefined, get: async (path, query = {}) => (await this.#front.answer({ target: withQuery(path, query), hedged: false, trace: context.trace, client: context.client })).value }
  }

  /**
   * A reader for one latest-state answer without an answer cache. With one node: pinned to
   * the height its first read is answered at (never below one served before), so the chain
   * is asked nothing but the answer's own reads. With several: pinned to the best head
   * (latest()), whose poll also tells which node lags.
   */
  async reader (context: ReadContext = NO_CONTEXT): Promise<ChainReader> {
    return this.nodeCount === 1 ? this.#pinning.firstAnswer(context) : this.latest(context)
  }

  /**
   * A latest-state read at the node's own latest height, from a node that is not lagging;
   * with the height it was answered at, raised to the served height if the node was behind it.
   */
  async readLatest (path: string, query: Query = {}, context: ReadContext = NO_CONTEXT): Promise<Answer> {
    return this.#pinning.readLatest(path, query, context)
  }

  /** GET from one node (the first by default), outside the limiter and without coalescing, under its own budget (readiness probes, re-probes of a down node). */
  async probe (path: string, timeoutMs: number, node = 0): Promise<unknown> {
    const chosen = this.#nodes.all[node]
    if (chosen === undefined) throw new RangeError(`no chain node ${node}; there are ${this.nodeCount}`)
    return this.#exchangeOutside(chosen, { path, timeoutMs, trace: undefined, headPoll: false })
  }

  /** The head poll's GET of one node's latest block, under the poll's budget, traced as the request's that started the poll. */
  async #askHead (node: number, timeoutMs: number, trace: ChainTrace | undefined): Promise<unknown> {
    return this.#exchangeOutside(this.#nodes.all[node] as ChainNode, { path: LATEST_BLOCK_PATH, timeoutMs, trace, headPoll: true })
  }

  async #exchangeOutside (node: ChainNode, request: { path: string, timeoutMs: number, trace: ChainTrace | undefined, headPoll: boolean }): Promise<unknown> {
    const { path, trace, headPoll } = request
    const outcome = await this.#deadlines.run(request.timeoutMs, async (deadline) => this.#exchange.send(node, { path, deadline, attempt: 1, trace, headPoll }))
    if (outcome.ok) return outcome.value
    throw outcome.error
  }

  /** Whether each node (in CHAIN_REST_URL order) is taking reads: false while it is skipped as down or rate-limited. */
  get nodesUp (): boolean[] {
    return this.#nodes.all.map((node) => this.#nodes.takesReads(node))
  }

  /** Whether each node (in CHAIN_REST_URL order) was caught lying by the cursor: out of rotation for good. */
  get nodesLying (): boolean[] {
    return this.#nodes.all.map((node) => node.lying)
  }

  /** Reads waiting for a slot of the limiter (EDGE_API_CHAIN_CONCURRENCY), coalesced ones counted once. */
  get queued (): number {
    return this.#front.queued
  }

  /** Chain requests currently sent and not yet answered. */
  get inFlight (): number {
    return this.#deadlines.size
  }

  /** Aborts every chain request in flight (forced shutdown); their callers get 503. */
  abortAll (): void {
    this.#deadlines.abortAll()
  }

  async close (): Promise<void> {
    this.#closed = true
    this.#stopPolling()
    await Promise.all([this.#nodes.close(), this.#rpc?.close()])
  }

  /**
   * One read that has its slot, under the chain timeout: its nodes one after the other
   * (failover.ts), or, hedged, a second attempt on another node once the first has not
   * answered after its delay (hedged-read.ts); the first answer wins and the other is aborted.
   */
  async #read (request: ReadRequest): Promise<Answer> {
    const outcome = await this.#deadlines.run(this.#timeoutMs, async (deadline) => {
      const { node, target: path, trace, height } = request
      if (node !== undefined) return this.#exchange.send(this.#nodes.all[node] as ChainNode, { path, deadline, attempt: 1, trace, height })
      const read = this.#choice.begin(request, deadline)
      return request.hedged && this.#hedged !== undefined ? this.#hedged.run(read) : this.#choice.failover(read)
    })
    if (outcome.ok) return { value: outcome.value, height: outcome.height }
    throw outcome.error
  }
}

/**
 * Each node's keep-alive pool: one connection per request the limiter lets through, so undici
 * never queues behind the limiter's back; no pipelining, because one slow chain answer would
 * stall the ones behind it. Idle sockets live 4 s, under the gateway's usual idle timeout.
 * undici cuts an answer off at maxResponseSize (chunked or not) and destroys its socket.
 */
function poolOptions (options: ChainClientOptions, maxResponseBytes: number): Pool.Options {
  return { connections: options.concurrency, pipelining: 1, keepAliveTimeout: 4000, maxResponseSize: maxResponseBytes, ...options.pool }
}
