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

t.test('every result the docs list is exported from the start at 0: a rate() or an alert on it has its series before the first event', async (t) => {
  const registry = new Registry()
  t.ok(new SharedTierMetrics(registry))
  const text = await registry.metrics()
  for (const operation of ['get', 'set', 'claim', 'release', 'publish', 'count']) {
    for (const result of ['ok', 'timeout', 'error', 'skipped']) t.equal(sampleValue(text, 'edge_api_shared_operations_total', { operation, result }), 0, `${operation} ${result}`)
  }
  for (const result of ['published', 'looked', 'confirmed', 'unconfirmed', 'behind', 'implausible', 'ignored']) t.equal(sampleValue(text, 'edge_api_shared_heads_total', { result }), 0, `heads ${result}`)
  for (const result of ['hit', 'waited', 'claimed', 'released', 'gave_up', 'unavailable']) t.equal(sampleValue(text, 'edge_api_shared_answers_total', { result }), 0, `answers ${result}`)
})
