import t from 'tap'
import { DURATION_BUCKETS, Metrics, UNMATCHED_ROUTE } from '../../src/metrics/registry.js'
import { metricTypes, parseSamples, sampleValue } from '../fixtures/prometheus.js'

const SPEC_METRICS = {
  http_request_duration_seconds: 'histogram',
  edge_api_requests_in_flight: 'gauge',
  edge_api_draining: 'gauge',
  edge_api_shed_total: 'counter',
  edge_api_chain_request_duration_seconds: 'histogram',
  edge_api_chain_queue_depth: 'gauge',
  edge_api_chain_node_up: 'gauge',
  edge_api_readiness_probe_total: 'counter',
  edge_api_trace_spans_dropped_total: 'counter'
}

t.test('every metric of SPEC §10 with its type, and the default process metrics', async (t) => {
  const metrics = new Metrics()
  const text = await metrics.scrape()
  const types = metricTypes(text)
  for (const [name, type] of Object.entries(SPEC_METRICS)) t.equal(types.get(name), type, `${name} is a ${type}`)
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
    t.ok(types.has(name), `default process metric ${name}`)
  }
  t.match(metrics.contentType, /^text\/plain; version=0\.0\.4/)
  // Unbound, the gauges read nothing: no drain, no queue, no nodes.
  t.equal(sampleValue(text, 'edge_api_draining'), 0)
  t.equal(sampleValue(text, 'edge_api_chain_queue_depth'), 0)
  t.equal(sampleValue(text, 'edge_api_requests_in_flight'), 0)
  t.equal(sampleValue(text, 'edge_api_chain_node_up'), undefined)
})

t.test('the gauges read their sources at scrape time', async (t) => {
  const metrics = new Metrics()
  const state = { draining: false, queued: 0, up: [true, true] }
  metrics.watch({ draining: () => state.draining, chainQueueDepth: () => state.queued, chainNodesUp: () => state.up })
  let text = await metrics.scrape()
  t.equal(sampleValue(text, 'edge_api_draining'), 0)
  t.equal(sampleValue(text, 'edge_api_chain_node_up', { node: '1' }), 1)
  t.equal(sampleValue(text, 'edge_api_chain_node_up', { node: '2' }), 1)
  Object.assign(state, { draining: true, queued: 7, up: [false, true] })
  metrics.requestStarted()
  metrics.requestStarted()
  metrics.requestEnded()
  text = await metrics.scrape()
  t.equal(sampleValue(text, 'edge_api_draining'), 1)
  t.equal(sampleValue(text, 'edge_api_chain_queue_depth'), 7)
  t.equal(sampleValue(text, 'edge_api_chain_node_up', { node: '1' }), 0, 'node 1 down')
  t.equal(sampleValue(text, 'edge_api_chain_node_up', { node: '2' }), 1)
  t.equal(sampleValue(text, 'edge_api_requests_in_flight'), 1)
})

t.test('requests, chain exchanges, shedding and probes by their labels', async (t) => {
  const metrics = new Metrics()
  metrics.requestAnswered('GET', '/v1/epochs/:epoch', 200, 0.003)
  metrics.requestAnswered('GET', '/v1/epochs/:epoch', 200, 0.2)
  metrics.requestAnswered('GET', UNMATCHED_ROUTE, 404, 0.001)
  metrics.exchange(1, 'ok', 0.02)
  metrics.exchange(2, 'timeout', 30)
  metrics.exchange(2, 'timeout', 30)
  metrics.shed('chain_queue')
  metrics.shed('chain_queue')
  metrics.shed('event_loop')
  metrics.readinessProbe('ok')
  metrics.readinessProbe('unavailable')
  const text = await metrics.scrape()
  const route = { method: 'GET', route: '/v1/epochs/:epoch', status_code: '200' }
  t.equal(sampleValue(text, 'http_request_duration_seconds_count', route), 2)
  t.equal(sampleValue(text, 'http_request_duration_seconds_sum', route), 0.203)
  t.equal(sampleValue(text, 'http_request_duration_seconds_bucket', { ...route, le: '0.005' }), 1)
  t.equal(sampleValue(text, 'http_request_duration_seconds_bucket', { ...route, le: '0.25' }), 2)
  t.equal(sampleValue(text, 'http_request_duration_seconds_count', { route: 'unmatched', status_code: '404' }), 1)
  t.equal(sampleValue(text, 'edge_api_chain_request_duration_seconds_count', { node: '1', outcome: 'ok' }), 1)
  t.equal(sampleValue(text, 'edge_api_chain_request_duration_seconds_count', { node: '2', outcome: 'timeout' }), 2)
  t.equal(sampleValue(text, 'edge_api_chain_request_duration_seconds_bucket', { node: '2', outcome: 'timeout', le: '30' }), 2, 'a 30 s timeout falls in a bucket of its own')
  t.equal(sampleValue(text, 'edge_api_shed_total', { reason: 'chain_queue' }), 2)
  t.equal(sampleValue(text, 'edge_api_shed_total', { reason: 'event_loop' }), 1)
  t.equal(sampleValue(text, 'edge_api_readiness_probe_total', { result: 'ok' }), 1)
  t.equal(sampleValue(text, 'edge_api_readiness_probe_total', { result: 'unavailable' }), 1)
  const buckets = parseSamples(text).filter((s) => s.name === 'http_request_duration_seconds_bucket' && s.labels.route === '/v1/epochs/:epoch')
  t.same(buckets.map((s) => s.labels.le), [...DURATION_BUCKETS.map(String), '+Inf'], 'up to the 2 m shutdown budget')
})

t.test('each instance has its own series; the process metrics are shared, not duplicated', async (t) => {
  const a = new Metrics()
  const b = new Metrics()
  a.shed('chain_queue')
  a.requestStarted()
  t.equal(sampleValue(await a.scrape(), 'edge_api_shed_total', { reason: 'chain_queue' }), 1)
  t.equal(sampleValue(await b.scrape(), 'edge_api_shed_total', { reason: 'chain_queue' }), undefined)
  t.equal(sampleValue(await b.scrape(), 'edge_api_requests_in_flight'), 0)
  const once = (text: string): number => parseSamples(text).filter((s) => s.name === 'process_start_time_seconds').length
  t.equal(once(await a.scrape()), 1)
  t.equal(once(await b.scrape()), 1)
})

t.test('spans dropped, by reason (tracing on)', async (t) => {
  const metrics = new Metrics()
  t.equal(sampleValue(await metrics.scrape(), 'edge_api_trace_spans_dropped_total', { reason: 'queue_full' }), undefined, 'no series before a loss')
  metrics.spansDropped('queue_full', 1)
  metrics.spansDropped('queue_full', 1)
  metrics.spansDropped('export_failed', 512)
  const text = await metrics.scrape()
  t.equal(sampleValue(text, 'edge_api_trace_spans_dropped_total', { reason: 'queue_full' }), 2)
  t.equal(sampleValue(text, 'edge_api_trace_spans_dropped_total', { reason: 'export_failed' }), 512)
})
