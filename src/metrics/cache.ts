import type { Counter, Registry } from 'prom-client'
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
  readonly #results: Counter<'route' | 'result'>
  readonly #evictions: Counter

  constructor (registry: Registry, sources: () => CacheSources) {
    this.#results = counterOf(registry, 'edge_api_cache_requests_total',
      'Cacheable /v1 reads by route and result: hit, coalesced (shared an answer being built), miss (built), revalidated (304)', ['route', 'result'])
    this.#evictions = counterOf(registry, 'edge_api_cache_evictions_total', 'Answers evicted from the cache to stay within EDGE_API_CACHE_SIZE')
    gaugeReading(registry, 'edge_api_cache_bytes', 'Bytes the answer cache holds, as counted against EDGE_API_CACHE_SIZE',
      () => sources().cacheBytes())
    gaugeReading(registry, 'edge_api_cache_entries', 'Answers the answer cache holds',
      () => sources().cacheEntries())
  }

  cacheResult (route: string, result: CacheResult): void {
    this.#results.inc({ route, result })
  }

  cacheEvicted (): void {
    this.#evictions.inc()
  }
}
