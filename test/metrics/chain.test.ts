import t from 'tap'
import { Registry } from 'prom-client'
import { ChainMetrics, type ChainSources } from '../../src/metrics/chain.js'
import { Metrics } from '../../src/metrics/registry.js'
import { sampleValue } from '../../harness/prometheus.js'

// The chain's metrics: what each node's gauges read at scrape time, and the hedges.

t.test('each node\'s head, lag and health, the served height and whether heights are known, read at scrape time', async (t) => {
  const registry = new Registry()
  const state: ChainSources = { chainQueueDepth: () => 3, chainNodesUp: () => [true, false], chainHeads: () => [120, 118], chainLags: () => [0, 2], servedHeight: () => 119, heightsKnown: () => false, chainNodesLying: () => [false, true], verifiedHeight: () => undefined }
  let sources = state
  const metrics = new ChainMetrics(registry, () => sources)
  metrics.readinessProbe('timeout')
  let text = await registry.metrics()
  t.equal(sampleValue(text, 'edge_api_chain_queue_depth'), 3)
  t.equal(sampleValue(text, 'edge_api_chain_head_height', { node: '1' }), 120)
  t.equal(sampleValue(text, 'edge_api_chain_head_height', { node: '2' }), 118)
  t.equal(sampleValue(text, 'edge_api_chain_node_lag', { node: '2' }), 2)
  t.equal(sampleValue(text, 'edge_api_chain_node_up', { node: '1' }), 1)
  t.equal(sampleValue(text, 'edge_api_chain_node_up', { node: '2' }), 0)
  t.equal(sampleValue(text, 'edge_api_served_height'), 119)
  t.equal(sampleValue(text, 'edge_api_chain_heights_known'), 0)
  t.equal(sampleValue(text, 'edge_api_readiness_probe_total', { result: 'timeout' }), 1)
  t.equal(sampleValue(text, 'edge_api_chain_node_lying', { node: '1' }), 0)
  t.equal(sampleValue(text, 'edge_api_chain_node_lying', { node: '2' }), 1)
  t.equal(sampleValue(text, 'edge_api_verified_height'), 0, 'V unknown')
  sources = { ...state, chainHeads: () => [121, 121], servedHeight: () => 121, heightsKnown: () => true, verifiedHeight: () => 119 }
  text = await registry.metrics()
  t.equal(sampleValue(text, 'edge_api_chain_head_height', { node: '2' }), 121, 'read again at the next scrape')
  t.equal(sampleValue(text, 'edge_api_served_height'), 121)
  t.equal(sampleValue(text, 'edge_api_chain_heights_known'), 1)
  t.equal(sampleValue(text, 'edge_api_verified_height'), 119)
})

t.test('hedged chain reads by result, and the hedges not sent by reason', async (t) => {
  const metrics = new Metrics()
  const before = await metrics.scrape()
  for (const result of ['won', 'lost', 'failed']) t.equal(sampleValue(before, 'edge_api_chain_hedges_total', { result }), 0, `${result} at 0 from the start`)
  for (const reason of ['budget', 'overload', 'no_node']) t.equal(sampleValue(before, 'edge_api_chain_hedges_skipped_total', { reason }), 0, `${reason} at 0 from the start`)
  metrics.hedged('won')
  metrics.hedged('won')
  metrics.hedged('lost')
  metrics.hedgeSkipped('budget')
  const text = await metrics.scrape()
  t.equal(sampleValue(text, 'edge_api_chain_hedges_total', { result: 'won' }), 2)
  t.equal(sampleValue(text, 'edge_api_chain_hedges_total', { result: 'lost' }), 1)
  t.equal(sampleValue(text, 'edge_api_chain_hedges_skipped_total', { reason: 'budget' }), 1)
  t.equal(sampleValue(text, 'edge_api_chain_hedges_skipped_total', { reason: 'overload' }), 0)
})
