import t from 'tap'
import { Registry } from 'prom-client'
import { SharedTierMetrics } from '../../src/metrics/shared-tier.js'
import { sampleValue } from '../../harness/prometheus.js'

t.test('the shared tier: down and at 0 until told otherwise; its store and subscription up and down; operations, heads and answers by result', async (t) => {
  const registry = new Registry()
  const metrics = new SharedTierMetrics(registry)
  let text = await registry.metrics()
  t.same([sampleValue(text, 'edge_api_shared_store_up'), sampleValue(text, 'edge_api_shared_subscription_up')], [0, 0], 'not configured: 0')
  t.equal(sampleValue(text, 'edge_api_shared_operations_total', { operation: 'get', result: 'timeout' }), 0, 'each operation and result at 0 from the start')
  metrics.sharedStoreState('up')
  metrics.sharedSubscriptionState('up')
  metrics.sharedOperation('get', 'timeout')
  metrics.sharedHead('published')
  metrics.sharedAnswer('hit')
  metrics.sharedAnswer('hit')
  text = await registry.metrics()
  t.same([sampleValue(text, 'edge_api_shared_store_up'), sampleValue(text, 'edge_api_shared_subscription_up')], [1, 1])
  t.equal(sampleValue(text, 'edge_api_shared_operations_total', { operation: 'get', result: 'timeout' }), 1)
  t.equal(sampleValue(text, 'edge_api_shared_heads_total', { result: 'published' }), 1)
  t.equal(sampleValue(text, 'edge_api_shared_answers_total', { result: 'hit' }), 2)
  metrics.sharedStoreState('down')
  metrics.sharedSubscriptionState('down')
  text = await registry.metrics()
  t.same([sampleValue(text, 'edge_api_shared_store_up'), sampleValue(text, 'edge_api_shared_subscription_up')], [0, 0])
})
