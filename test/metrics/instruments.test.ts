import t from 'tap'
import { Registry } from 'prom-client'
import { counterOf, DURATION_BUCKETS, durationHistogram, gaugeReading, perNodeGauge } from '../../src/metrics/instruments.js'
import { parseSamples, sampleValue } from '../../harness/prometheus.js'

t.test('gauges read at scrape time; counters at 0 from the start for the label sets given; durations in DURATION_BUCKETS', async (t) => {
  const registry = new Registry()
  let value = 1
  let nodes = [5, 7]
  gaugeReading(registry, 'test_gauge', 'a gauge', () => value)
  perNodeGauge(registry, 'test_per_node', 'per node', () => nodes)
  const counter = counterOf(registry, 'test_total', 'a counter', ['reason'], [{ reason: 'a' }, { reason: 'b' }])
  const plain = counterOf(registry, 'test_plain_total', 'no label')
  durationHistogram(registry, 'test_seconds', 'durations', ['route']).series({ route: 'x' }).observe(0.02)
  let text = await registry.metrics()
  t.same([sampleValue(text, 'test_gauge'), sampleValue(text, 'test_per_node', { node: '1' }), sampleValue(text, 'test_per_node', { node: '2' })], [1, 5, 7])
  t.same([sampleValue(text, 'test_total', { reason: 'a' }), sampleValue(text, 'test_total', { reason: 'b' }), sampleValue(text, 'test_plain_total')], [0, 0, 0])
  t.same(parseSamples(text).filter((s) => s.name === 'test_seconds_bucket').map((s) => s.labels.le), [...DURATION_BUCKETS.map(String), '+Inf'])
  value = 2
  nodes = [6, 8]
  counter.inc({ reason: 'b' })
  plain.inc()
  text = await registry.metrics()
  t.same([sampleValue(text, 'test_gauge'), sampleValue(text, 'test_per_node', { node: '2' }), sampleValue(text, 'test_total', { reason: 'b' }), sampleValue(text, 'test_plain_total')], [2, 8, 1, 1])
})
