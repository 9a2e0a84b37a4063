import { collectDefaultMetrics, Counter, Gauge, Registry, type Metric } from 'prom-client'
import type { BuildInfo } from '../build-info.js'
import type { CacheObserver, CacheResult } from '../cache/answer-cache.js'
import type { ChainObserver, ChainOutcome } from '../chain/types.js'
import { HEDGE_RESULTS, HEDGE_SKIPS, type HedgeResult, type HedgeSkip } from '../chain/hedging.js'
import { HINT_RESULTS, type HintResult } from '../shared/head-hints.js'
import { SHARED_LOOKUPS, type SharedLookup } from '../shared/shared-answers.js'
import { OPERATION_RESULTS, OPERATIONS, type Operation, type OperationResult, type StoreObserver, type StoreState } from '../shared/store.js'
import type { SubscriptionState } from '../shared/subscription.js'
import { DROP_REASONS, type DropReason } from '../tracing/drop-report.js'
import { Histogram, type HistogramSeries } from './histogram.js'
import { REFUSAL_REASONS, SHED_REASONS, type RefusalReason, type ShedReason } from './labels.js'
import { WaitingMetrics } from './waiting.js'

// Every metric edge-api exports (docs/metrics.md), defined here and nowhere else. The rest of the
// service only calls the methods below (through observer interfaces, so none of it imports
// prom-client); gauges are read when Prometheus scrapes, so they cost nothing per request.

/**
 * Seconds, from a cached answer to the longest a request may take: the chain timeout (30 s)
 * and the shutdown budget (2 m) end the last buckets.
 */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

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
  /** The answer cache's bytes and entries (0 when off). */
  readonly cacheBytes?: () => number
  readonly cacheEntries?: () => number
  /** Distinct clients with a /v1 request in flight (src/http/fair-share.ts). */
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
  #inFlight = 0
  readonly #requestDuration: Histogram<'method' | 'route' | 'status_code'>
  readonly #chainDuration: Histogram<'node' | 'outcome'>
  readonly #shed: Counter<'reason'>
  readonly #refusals: Counter<'reason'>
  readonly #probes: Counter<'result'>
  readonly #spansDropped: Counter<'reason'>
  readonly #cacheResults: Counter<'route' | 'result'>
  readonly #cacheEvictions: Counter
  readonly #hedges: Counter<'result'>
  readonly #hedgesSkipped: Counter<'reason'>
  readonly #sharedOperations: Counter<'operation' | 'result'>
  readonly #sharedHeads: Counter<'result'>
  readonly #sharedAnswers: Counter<'result'>
  #sharedUp = 0
  #subscriptionUp = 0
  /** Held long-polls and event streams (waiting.ts). */
  readonly waiting: WaitingMetrics
  // Label children by key: the per-request path looks one up instead of hashing a label object.
  readonly #requestChildren = new Map<string, HistogramSeries>()
  readonly #chainChildren = new Map<string, HistogramSeries>()

  /** `build`: which build this is, for edge_api_build_info. */
  constructor (build: Pick<BuildInfo, 'version' | 'commit'> = { version: '', commit: '' }) {
    const own = new Registry()
    const registers = [own]
    // A gauge read at scrape time (prom-client calls collect() with the gauge as `this`).
    const gauge = (name: string, help: string, read: () => number): void => {
      own.registerMetric(new Gauge({ name, help, registers: [], collect () { this.set(read()) } }))
    }
    // Our own histogram (histogram.ts): prom-client's types name only its own classes, and
    // its Registry reads name, help, get() and getForPromString().
    const histogram = <Label extends string>(options: ConstructorParameters<typeof Histogram<Label>>[0]): Histogram<Label> => {
      const metric = new Histogram(options)
      own.registerMetric(metric as unknown as Metric)
      return metric
    }

    this.waiting = new WaitingMetrics(own)
    this.#requestDuration = histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer an HTTP request on the public port, by route pattern ("unmatched" when no route matched)',
      labelNames: ['method', 'route', 'status_code'],
      buckets: DURATION_BUCKETS
    })
    gauge('edge_api_requests_in_flight', 'HTTP requests received on the public port and not answered yet',
      () => this.#inFlight)
    gauge('edge_api_draining', '1 from the drain latch (SIGTERM) on: /readyz answers draining, the replica is leaving',
      () => this.#sources.draining() ? 1 : 0)
    this.#shed = new Counter({
      name: 'edge_api_shed_total',
      help: 'Requests refused with 503 + Retry-After to protect the service, by reason',
      labelNames: ['reason'],
      registers
    })
    // Every reason from the start, at 0: an alert on a rate sees the first refusal.
    for (const reason of SHED_REASONS) this.#shed.inc({ reason }, 0)
    this.#refusals = new Counter({
      name: 'edge_api_refusals_total',
      help: 'Requests refused with 429 + Retry-After as a client\'s own excess, by reason: fair_share (over its share while the replica is busy), rate_limit (over EDGE_API_RATE_LIMIT)',
      labelNames: ['reason'],
      registers
    })
    for (const reason of REFUSAL_REASONS) this.#refusals.inc({ reason }, 0)
    gauge('edge_api_active_clients', 'Distinct clients with a /v1 request within the last 10 s (estimated in bounded memory: exact while few)',
      () => this.#sources.activeClients())
    this.#chainDuration = histogram({
      name: 'edge_api_chain_request_duration_seconds',
      help: 'Time of one exchange with one chain node (reads, failover attempts, probes), by node (1-based position in CHAIN_REST_URL) and outcome',
      labelNames: ['node', 'outcome'],
      buckets: DURATION_BUCKETS
    })
    this.#hedges = new Counter({
      name: 'edge_api_chain_hedges_total',
      help: 'Hedged chain reads: second attempts sent to another node when the first had not answered in time, by result: won (its answer was used, the first attempt aborted), lost (the other attempt answered, the hedge aborted), failed (the read failed all the same)',
      labelNames: ['result'],
      registers
    })
    this.#hedgesSkipped = new Counter({
      name: 'edge_api_chain_hedges_skipped_total',
      help: 'Hedges that were due and not sent, by reason: budget (EDGE_API_HEDGE spent), overload (shedding, or the chain queue more than half full), no_node (no other node could take it)',
      labelNames: ['reason'],
      registers
    })
    // At 0 from the start, so a rate sees the first hedge.
    for (const result of HEDGE_RESULTS) this.#hedges.inc({ result }, 0)
    for (const reason of HEDGE_SKIPS) this.#hedgesSkipped.inc({ reason }, 0)
    gauge('edge_api_chain_queue_depth', 'Chain reads waiting for a slot (EDGE_API_CHAIN_CONCURRENCY); beyond its bound they are shed',
      () => this.#sources.chainQueueDepth())
    const perNode = (name: string, help: string, read: () => readonly number[]): void => {
      own.registerMetric(new Gauge({
        name,
        help,
        labelNames: ['node'],
        registers: [],
        collect () {
          read().forEach((value, i) => this.set({ node: String(i + 1) }, value))
        }
      }))
    }
    perNode('edge_api_chain_head_height', 'Each chain node\'s latest height as this replica last saw it (0: unknown), by node (1-based position in CHAIN_REST_URL)',
      () => this.#sources.chainHeads())
    perNode('edge_api_chain_node_lag', 'Blocks each chain node is behind the best head; beyond EDGE_API_MAX_NODE_LAG it takes no latest-state reads',
      () => this.#sources.chainLags())
    gauge('edge_api_served_height', 'The highest block height served to a latest-state read; never goes down',
      () => this.#sources.servedHeight())
    gauge('edge_api_chain_heights_known', '1 while the head poll confirms the chain\'s head (latest-state answers pinned to it and cached); 0 while no node tells its head: answers read unpinned, uncached',
      () => Number(this.#sources.heightsKnown()))
    this.#cacheResults = new Counter({
      name: 'edge_api_cache_requests_total',
      help: 'Cacheable /v1 reads by route and result: hit, coalesced (shared an answer being built), miss (built), revalidated (304)',
      labelNames: ['route', 'result'],
      registers
    })
    this.#cacheEvictions = new Counter({
      name: 'edge_api_cache_evictions_total',
      help: 'Answers evicted from the cache to stay within EDGE_API_CACHE_SIZE',
      registers
    })
    gauge('edge_api_cache_bytes', 'Bytes the answer cache holds, as counted against EDGE_API_CACHE_SIZE',
      () => this.#sources.cacheBytes())
    gauge('edge_api_cache_entries', 'Answers the answer cache holds',
      () => this.#sources.cacheEntries())
    const nodesUp = (): readonly boolean[] => this.#sources.chainNodesUp()
    own.registerMetric(new Gauge({
      name: 'edge_api_chain_node_up',
      help: '1 while the chain node takes reads, 0 while it is skipped as down; by node (1-based position in CHAIN_REST_URL)',
      labelNames: ['node'],
      registers: [],
      collect () {
        nodesUp().forEach((up, i) => this.set({ node: String(i + 1) }, up ? 1 : 0))
      }
    }))
    this.#probes = new Counter({
      name: 'edge_api_readiness_probe_total',
      help: 'Readiness chain probes (not the cached answers), by result: ok, or how it failed',
      labelNames: ['result'],
      registers
    })
    // The usual build_info: always 1, its labels say which build this replica runs.
    new Gauge({
      name: 'edge_api_build_info',
      help: 'Always 1; version (package.json) and commit (the image build\'s GIT_COMMIT, "" when unknown) name the build this replica runs',
      labelNames: ['version', 'commit'],
      registers
    }).set({ version: build.version, commit: build.commit }, 1)
    this.#spansDropped = new Counter({
      name: 'edge_api_trace_spans_dropped_total',
      help: 'Trace spans that never reached the collector (tracing on): queue_full while it is slow or down, export_failed when it refused a batch',
      labelNames: ['reason'],
      registers
    })
    // Exported at 0 from the start (tracing off included), so an alert on the rate sees the first drop.
    for (const reason of DROP_REASONS) this.#spansDropped.inc({ reason }, 0)
    // The shared tier (docs/shared-tier.md): exported whether it is configured or not, at 0 without it.
    gauge('edge_api_shared_store_up', '1 while the shared tier\'s store answers (EDGE_API_REDIS_URL), 0 while it is connecting, down or unresponsive, or not configured',
      () => this.#sharedUp)
    gauge('edge_api_shared_subscription_up', '1 while the shared tier\'s subscribing connection holds its channels and answers its pings (heads and built answers heard), 0 otherwise or not configured',
      () => this.#subscriptionUp)
    this.#sharedOperations = new Counter({
      name: 'edge_api_shared_operations_total',
      help: 'Commands to the shared tier\'s store by operation and result: ok, timeout (past its few-ms deadline), error, skipped (not sent: the store is down or unresponsive)',
      labelNames: ['operation', 'result'],
      registers
    })
    for (const operation of OPERATIONS) for (const result of OPERATION_RESULTS) this.#sharedOperations.inc({ operation, result }, 0)
    this.#sharedHeads = new Counter({
      name: 'edge_api_shared_heads_total',
      help: 'Heads shared across the pool, by result: published (this replica\'s), looked (another\'s head ahead: its nodes asked now), confirmed / unconfirmed (by that look), behind, implausible (too far ahead: ignored), ignored',
      labelNames: ['result'],
      registers
    })
    for (const result of HINT_RESULTS) this.#sharedHeads.inc({ result }, 0)
    this.#sharedAnswers = new Counter({
      name: 'edge_api_shared_answers_total',
      help: 'Answer-cache misses looked up in the shared tier, by result: hit, waited (for the replica building it), claimed (this replica builds it), released (its builder said it will not share it: built here), gave_up (no answer within the wait, then built), unavailable (the store or the network did not say, or no subscription to be woken by)',
      labelNames: ['result'],
      registers
    })
    for (const result of SHARED_LOOKUPS) this.#sharedAnswers.inc({ result }, 0)
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
    this.#inFlight++
  }

  requestEnded (): void {
    this.#inFlight--
  }

  /** One answered request: `route` is its pattern (UNMATCHED_ROUTE when none matched). */
  requestAnswered (method: string, route: string, statusCode: number, seconds: number): void {
    const key = `${method} ${statusCode} ${route}`
    let child = this.#requestChildren.get(key)
    if (child === undefined) {
      child = this.#requestDuration.series({ method, route, status_code: statusCode })
      this.#requestChildren.set(key, child)
    }
    child.observe(seconds)
  }

  /** A request refused: with 503 + Retry-After (shed) or, for a client's excess, 429 (refused). */
  shed (reason: ShedReason | RefusalReason): void {
    if ((REFUSAL_REASONS as readonly string[]).includes(reason)) this.#refusals.inc({ reason })
    else this.#shed.inc({ reason })
  }

  /** A request refused because of its client (429 over EDGE_API_RATE_LIMIT, or over its fair share). */
  refused (reason: RefusalReason): void {
    this.#refusals.inc({ reason })
  }

  exchange (node: number, outcome: ChainOutcome, seconds: number): void {
    const key = `${node} ${outcome}`
    let child = this.#chainChildren.get(key)
    if (child === undefined) {
      child = this.#chainDuration.series({ node: String(node), outcome })
      this.#chainChildren.set(key, child)
    }
    child.observe(seconds)
  }

  hedged (result: HedgeResult): void {
    this.#hedges.inc({ result })
  }

  hedgeSkipped (reason: HedgeSkip): void {
    this.#hedgesSkipped.inc({ reason })
  }

  readinessProbe (result: ChainOutcome): void {
    this.#probes.inc({ result })
  }

  spansDropped (reason: DropReason, spans: number): void {
    this.#spansDropped.inc({ reason }, spans)
  }

  cacheResult (route: string, result: CacheResult): void {
    this.#cacheResults.inc({ route, result })
  }

  cacheEvicted (): void {
    this.#cacheEvictions.inc()
  }

  sharedOperation (operation: Operation, result: OperationResult): void {
    this.#sharedOperations.inc({ operation, result })
  }

  sharedSubscriptionState (state: SubscriptionState): void {
    this.#subscriptionUp = state === 'up' ? 1 : 0
  }

  sharedStoreState (state: StoreState): void {
    this.#sharedUp = state === 'up' ? 1 : 0
  }

  sharedHead (result: HintResult): void {
    this.#sharedHeads.inc({ result })
  }

  sharedAnswer (result: SharedLookup): void {
    this.#sharedAnswers.inc({ result })
  }
}
