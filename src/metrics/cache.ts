import { Counter, type Registry } from 'prom-client'
import type { CacheObserver, CacheResult } from '../cache/answer-cache.js'
import { counterOf, gaugeReading } from './instruments.js'

// The metrics of the answer cache (docs/metrics.md): its results by route, its evictions, its
// size. Part of a service's Metrics (registry.ts), in its registry.

/** What the cache's gauges read at scrape time (registry.ts's MetricsSources). */
export interface CacheSources {
  readonly cacheBytes: () => number
  readonly cacheEntries: () => number
}

export class CacheMetrics implements CacheObserver {
  /**
   * Results counted since the last scrape, by route and result, handed to the counter when
   * Prometheus scrapes: prom-client's inc() checks and hashes its labels on every call (a
   * labels() child too), on every cache hit; here a hit is two map reads and an addition.
   */
  readonly #unreported = new Map<string, Map<CacheResult, number>>()
  readonly #evictions: Counter

  constructor (registry: Registry, sources: () => CacheSources) {
    const unreported = this.#unreported
    registry.registerMetric(new Counter({
      name: 'edge_api_cache_requests_total',
      help: 'Cacheable /v1 reads by route and result: hit, coalesced (shared an answer being built), miss (built), revalidated (304)',
      labelNames: ['route', 'result'],
      registers: [],
      collect () {
        for (const [route, results] of unreported) {
          for (const [result, count] of results) this.inc({ route, result }, count)
        }
        unreported.clear()
      }
    }))
    this.#evictions = counterOf(registry, 'edge_api_cache_evictions_total', 'Answers evicted from the cache to stay within EDGE_API_CACHE_SIZE')
    gaugeReading(registry, 'edge_api_cache_bytes', 'Bytes the answer cache holds, as counted against EDGE_API_CACHE_SIZE',
      () => sources().cacheBytes())
    gaugeReading(registry, 'edge_api_cache_entries', 'Answers the answer cache holds',
      () => sources().cacheEntries())
  }

  cacheResult (route: string, result: CacheResult): void {
    let results = this.#unreported.get(route)
    if (results === undefined) {
      results = new Map()
      this.#unreported.set(route, results)
    }
    results.set(result, (results.get(result) ?? 0) + 1)
  }

  cacheEvicted (): void {
    this.#evictions.inc()
  }
}
