import type { Counter, Registry } from 'prom-client'
import { HEDGE_RESULTS, HEDGE_SKIPS, type HedgeResult, type HedgeSkip } from '../chain/hedging.js'
import type { ChainOutcome } from '../chain/types.js'
import type { Histogram } from './histogram.js'
import { counterOf, durationHistogram, gaugeReading, perNodeGauge } from './instruments.js'

// The metrics of the chain's nodes and of reading them (docs/metrics.md): each exchange, the
// hedges, the queue, each node's head, lag and health, the served height, the readiness probes.
// Part of a service's Metrics (registry.ts), in its registry.

/** What the chain's gauges read at scrape time (registry.ts's MetricsSources). */
export interface ChainSources {
  readonly chainQueueDepth: () => number
  readonly chainNodesUp: () => readonly boolean[]
  readonly chainHeads: () => readonly number[]
  readonly chainLags: () => readonly number[]
  readonly servedHeight: () => number
  readonly heightsKnown: () => boolean
  readonly chainNodesLying: () => readonly boolean[]
  readonly verifiedHeight: () => number | undefined
}

export class ChainMetrics {
  readonly #chainDuration: Histogram<'node' | 'outcome'>
  readonly #hedges: Counter<'result'>
  readonly #hedgesSkipped: Counter<'reason'>
  readonly #probes: Counter<'result'>

  constructor (registry: Registry, sources: () => ChainSources) {
    this.#chainDuration = durationHistogram(registry, 'edge_api_chain_request_duration_seconds',
      'Time of one exchange with one chain node (reads, failover attempts, probes), by node (1-based position in CHAIN_REST_URL) and outcome',
      ['node', 'outcome'])
    this.#hedges = counterOf(registry, 'edge_api_chain_hedges_total',
      'Hedged chain reads: second attempts sent to another node when the first had not answered in time, by result: won (its answer was used, the first attempt aborted), lost (the other attempt answered, the hedge aborted), failed (the read failed all the same)',
      ['result'], HEDGE_RESULTS.map((result) => ({ result })))
    this.#hedgesSkipped = counterOf(registry, 'edge_api_chain_hedges_skipped_total',
      'Hedges that were due and not sent, by reason: budget (EDGE_API_HEDGE spent), overload (shedding, or the chain queue more than half full), no_node (no other node could take it)',
      ['reason'], HEDGE_SKIPS.map((reason) => ({ reason })))
    gaugeReading(registry, 'edge_api_chain_queue_depth', 'Chain reads waiting for a slot (EDGE_API_CHAIN_CONCURRENCY); beyond its bound they are shed',
      () => sources().chainQueueDepth())
    this.#heights(registry, sources)
    this.#probes = counterOf(registry, 'edge_api_readiness_probe_total', 'Readiness chain probes (not the cached answers), by result: ok, or how it failed', ['result'])
  }

  /** Each node's head, lag and health, and the heights served. */
  #heights (registry: Registry, sources: () => ChainSources): void {
    perNodeGauge(registry, 'edge_api_chain_head_height', 'Each chain node\'s latest height as this replica last saw it (0: unknown), by node (1-based position in CHAIN_REST_URL)',
      () => sources().chainHeads())
    perNodeGauge(registry, 'edge_api_chain_node_lag', 'Blocks each chain node is behind the best head; beyond EDGE_API_MAX_NODE_LAG it takes no latest-state reads',
      () => sources().chainLags())
    gaugeReading(registry, 'edge_api_served_height', 'The highest block height served to a latest-state read; never goes down',
      () => sources().servedHeight())
    gaugeReading(registry, 'edge_api_chain_heights_known', '1 while the head poll confirms the chain\'s head (latest-state answers pinned to it and cached); 0 while no node tells its head: answers read unpinned, uncached',
      () => Number(sources().heightsKnown()))
    perNodeGauge(registry, 'edge_api_chain_node_lying', '1 once the chain node served a header that does not verify or contradicts a verified one (EDGE_API_VERIFICATION not off): out of rotation until restarted; by node (1-based position in CHAIN_REST_URL)',
      () => sources().chainNodesLying().map(Number))
    gaugeReading(registry, 'edge_api_verified_height', 'V: the newest height whose state this replica verified from the trust root (EDGE_API_VERIFICATION not off); 0 while unknown',
      () => sources().verifiedHeight() ?? 0)
    perNodeGauge(registry, 'edge_api_chain_node_up', '1 while the chain node takes reads, 0 while it is skipped as down; by node (1-based position in CHAIN_REST_URL)',
      () => sources().chainNodesUp().map(Number))
  }

  exchange (node: number, outcome: ChainOutcome, seconds: number): void {
    this.#chainDuration.seriesByKey(`${node} ${outcome}`, { node: String(node), outcome }).observe(seconds)
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
}
