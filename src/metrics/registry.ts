import { collectDefaultMetrics, Gauge, Registry, type Counter } from 'prom-client'
import type { BuildInfo } from '../build-info.js'
import type { CacheObserver, CacheResult } from '../cache/answer-cache.js'
import type { HedgeResult, HedgeSkip } from '../chain/hedging.js'
import type { ChainObserver, ChainOutcome } from '../chain/types.js'
import type { HintResult } from '../shared/head-hints.js'
import type { SharedLookup } from '../shared/shared-answers.js'
import type { Operation, OperationResult, StoreObserver, StoreState } from '../shared/store.js'
import type { SubscriptionState } from '../shared/subscription.js'
import { DROP_REASONS, type DropReason } from '../tracing/drop-report.js'
import { CacheMetrics } from './cache.js'
import { ChainMetrics } from './chain.js'
import { HttpMetrics } from './http.js'
import { counterOf } from './instruments.js'
import type { RefusalReason, ShedReason } from './labels.js'
import { SharedTierMetrics } from './shared-tier.js'
import { WaitingMetrics } from './waiting.js'

// Every metric edge-api exports (docs/metrics.md), one family a file: http.ts, chain.ts,
// cache.ts, shared-tier.ts, waiting.ts, and here the build and the traces' losses; all in one
// registry per service. The rest of the service only calls the methods below (through observer
// interfaces, so none of it imports prom-client).

/** What the gauges read at scrape time; service.ts binds them to the chain client and readiness. */
export interface MetricsSources {
  /** True from the drain latch (SIGTERM) on. */
  readonly draining: () => boolean
  /** Chain reads waiting for a slot. */
  readonly chainQueueDepth: () => number
  /** Whether each chain node takes reads, in CHAIN_REST_URL order. */
  readonly chainNodesUp: () => readonly boolean[]
  /** Each node's head as last seen (0: unknown), in CHAIN_REST_URL order. */
  readonly chainHeads?: () => readonly number[]
  /** Each node's blocks behind the best head. */
  readonly chainLags?: () => readonly number[]
  /** The highest height served to a latest-state read. */
  readonly servedHeight?: () => number
  /** False while no node's head poll confirms a head (latest-state reads go unpinned). */
  readonly heightsKnown?: () => boolean
  /** Whether each chain node was caught lying by the verified-height cursor (all false when verification is off). */
  readonly chainNodesLying?: () => readonly boolean[]
  /** V, the newest verified height (undefined: unknown, or verification off). */
  readonly verifiedHeight?: () => number | undefined
  /** The answer cache's bytes and entries (0 when off). */
  readonly cacheBytes?: () => number
  readonly cacheEntries?: () => number
  /** Distinct clients with a /v1 request in flight (src/admission/fair-share.ts). */
  readonly activeClients?: () => number
}

const NO_SOURCES: Required<MetricsSources> = {
  draining: () => false,
  chainQueueDepth: () => 0,
  chainNodesUp: () => [],
  chainHeads: () => [],
  chainLags: () => [],
  servedHeight: () => 0,
  heightsKnown: () => true,
  chainNodesLying: () => [],
  verifiedHeight: () => undefined,
  cacheBytes: () => 0,
  cacheEntries: () => 0,
  activeClients: () => 0
}

// The process metrics (CPU, memory, event loop lag, GC, handles) describe the process, not a
// service instance, and prom-client's collectors cannot be stopped: they are created once per
// process, in a registry of our own (never prom-client's global one), and shared by every
// instance's registry.
let processRegistry: Registry | undefined
function processMetrics (): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

/**
 * One service instance's metrics, in a registry of its own, so several services in one
 * process (tests, the bench) never share a series. Implements every observer the service
 * reports to: requests (src/metrics/requests.ts), the chain client, readiness, shedding.
 */
export class Metrics implements ChainObserver, CacheObserver, StoreObserver {
  /** This instance's series and the process metrics. */
  readonly registry: Registry
  #sources = NO_SOURCES
  readonly #http: HttpMetrics
  readonly #chain: ChainMetrics
  readonly #cache: CacheMetrics
  readonly #shared: SharedTierMetrics
  readonly #spansDropped: Counter<'reason'>
  /** Held long-polls and event streams (waiting.ts). */
  readonly waiting: WaitingMetrics

  /** `build`: which build this is, for edge_api_build_info. */
  constructor (build: Pick<BuildInfo, 'version' | 'commit'> = { version: '', commit: '' }) {
    const own = new Registry()
    const sources = (): Required<MetricsSources> => this.#sources
    this.waiting = new WaitingMetrics(own)
    this.#http = new HttpMetrics(own, sources)
    this.#chain = new ChainMetrics(own, sources)
    this.#cache = new CacheMetrics(own, sources)
    // The usual build_info: always 1, its labels say which build this replica runs.
    new Gauge({
      name: 'edge_api_build_info',
      help: 'Always 1; version (package.json) and commit (the image build\'s GIT_COMMIT, "" when unknown) name the build this replica runs',
      labelNames: ['version', 'commit'],
      registers: [own]
    }).set({ version: build.version, commit: build.commit }, 1)
    this.#spansDropped = counterOf(own, 'edge_api_trace_spans_dropped_total',
      'Trace spans that never reached the collector (tracing on): queue_full while it is slow or down, export_failed when it refused a batch',
      ['reason'], DROP_REASONS.map((reason) => ({ reason })))
    this.#shared = new SharedTierMetrics(own)
    this.registry = Registry.merge([own, processMetrics()])
  }

  /** Binds the gauges to what they read (service.ts, once the chain client and readiness exist). */
  watch (sources: MetricsSources): void {
    this.#sources = { ...NO_SOURCES, ...sources }
  }

  /** Prometheus' text format of every series. */
  async scrape (): Promise<string> {
    return this.registry.metrics()
  }

  get contentType (): string {
    return this.registry.contentType
  }

  requestStarted (): void {
    this.#http.requestStarted()
  }

  requestEnded (): void {
    this.#http.requestEnded()
  }

  /** One answered request: `route` is its pattern (UNMATCHED_ROUTE when none matched). */
  requestAnswered (method: string, route: string, statusCode: number, seconds: number): void {
    this.#http.requestAnswered(method, route, statusCode, seconds)
  }

  /** A request refused: with 503 + Retry-After (shed) or, for a client's excess, 429 (refused). */
  shed (reason: ShedReason | RefusalReason): void {
    this.#http.shed(reason)
  }

  /** A request refused because of its client (429 over EDGE_API_RATE_LIMIT, or over its fair share). */
  refused (reason: RefusalReason): void {
    this.#http.refused(reason)
  }

  exchange (node: number, outcome: ChainOutcome, seconds: number): void {
    this.#chain.exchange(node, outcome, seconds)
  }

  hedged (result: HedgeResult): void {
    this.#chain.hedged(result)
  }

  hedgeSkipped (reason: HedgeSkip): void {
    this.#chain.hedgeSkipped(reason)
  }

  readinessProbe (result: ChainOutcome): void {
    this.#chain.readinessProbe(result)
  }

  spansDropped (reason: DropReason, spans: number): void {
    this.#spansDropped.inc({ reason }, spans)
  }

  cacheResult (route: string, result: CacheResult): void {
    this.#cache.cacheResult(route, result)
  }

  cacheEvicted (): void {
    this.#cache.cacheEvicted()
  }

  sharedOperation (operation: Operation, result: OperationResult): void {
    this.#shared.sharedOperation(operation, result)
  }

  sharedSubscriptionState (state: SubscriptionState): void {
    this.#shared.sharedSubscriptionState(state)
  }

  sharedStoreState (state: StoreState): void {
    this.#shared.sharedStoreState(state)
  }

  sharedHead (result: HintResult): void {
    this.#shared.sharedHead(result)
  }

  sharedAnswer (result: SharedLookup): void {
    this.#shared.sharedAnswer(result)
  }
}
