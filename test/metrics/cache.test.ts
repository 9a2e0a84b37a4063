import t from 'tap'
import { Registry } from 'prom-client'
import { CacheMetrics } from '../../src/metrics/cache.js'
import { sampleValue } from '../../harness/prometheus.js'

t.test('the answer cache\'s results by route, its evictions, and its size as it is when scraped', async (t) => {
  const registry = new Registry()
  const size = { bytes: 2048, entries: 3 }
  const metrics = new CacheMetrics(registry, () => ({ cacheBytes: () => size.bytes, cacheEntries: () => size.entries }))
  metrics.cacheResult('/v1/epochs/latest', 'hit')
  metrics.cacheResult('/v1/epochs/latest', 'hit')
  metrics.cacheResult('/v1/epochs/:epoch', 'miss')
  metrics.cacheEvicted()
  let text = await registry.metrics()
  t.equal(sampleValue(text, 'edge_api_cache_requests_total', { route: '/v1/epochs/latest', result: 'hit' }), 2)
  t.equal(sampleValue(text, 'edge_api_cache_requests_total', { route: '/v1/epochs/:epoch', result: 'miss' }), 1)
  t.equal(sampleValue(text, 'edge_api_cache_evictions_total'), 1)
  t.same([sampleValue(text, 'edge_api_cache_bytes'), sampleValue(text, 'edge_api_cache_entries')], [2048, 3])
  Object.assign(size, { bytes: 0, entries: 0 })
  text = await registry.metrics()
  t.same([sampleValue(text, 'edge_api_cache_bytes'), sampleValue(text, 'edge_api_cache_entries')], [0, 0], 'read again at the next scrape')
  t.equal(sampleValue(text, 'edge_api_cache_requests_total', { route: '/v1/epochs/latest', result: 'hit' }), 2, 'a count handed over once, not again at the next scrape')
  metrics.cacheResult('/v1/epochs/latest', 'hit')
  metrics.cacheResult('/v1/epochs/latest', 'revalidated')
  text = await registry.metrics()
  t.equal(sampleValue(text, 'edge_api_cache_requests_total', { route: '/v1/epochs/latest', result: 'hit' }), 3, 'the results since added to it')
  t.equal(sampleValue(text, 'edge_api_cache_requests_total', { route: '/v1/epochs/latest', result: 'revalidated' }), 1)
  t.equal(sampleValue(text, 'edge_api_cache_requests_total', { route: '/v1/epochs/:epoch', result: 'miss' }), 1)
})
