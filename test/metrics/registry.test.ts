import t from 'tap'
import { REFUSAL_REASONS, SHED_REASONS, UNMATCHED_ROUTE } from '../../src/metrics/labels.js'
import { DURATION_BUCKETS } from '../../src/metrics/instruments.js'
import { Metrics } from '../../src/metrics/registry.js'
import { code, codes, markdownTable, repoFile } from '../fixtures/markdown.js'
import { metricTypes, parseSamples, sampleValue } from '../../harness/prometheus.js'

// The operators' list of metrics: what dashboards and alerts are written against.
const METRICS_DOC = 'docs/metrics.md'
const documented = markdownTable(repoFile(METRICS_DOC), 'metric')
  .filter((row) => !(row[0] ?? '').includes('*'))
  .map(([name, type, labels, what]) => ({ name: code(name) as string, type, labels: codes(labels), what }))

t.test(`every metric of the table in ${METRICS_DOC}, with its type and labels, and nothing else; and the default process metrics`, async (t) => {
  const metrics = new Metrics()
  const text = await metrics.scrape()
  const types = metricTypes(text)
  t.ok(documented.length >= 8, `${documented.length} metrics documented`)
  for (const { name, type } of documented) t.equal(types.get(name), type, `${name} is a ${type}`)
  const ours = [...types.keys()].filter((name) => /^(edge_api|http)_/.test(name))
  t.same(ours.sort(), documented.map((m) => m.name).sort(), 'no metric left out of the table')
  metrics.requestAnswered('GET', '/v1/status', 200, 0.001)
  metrics.exchange(1, 'ok', 0.01)
  metrics.readinessProbe('ok')
  metrics.waiting.heldReleased('head', 1)
  metrics.cacheResult('/v1/epochs/latest', 'hit')
  metrics.watch({ draining: () => false, chainQueueDepth: () => 0, chainNodesUp: () => [true], chainHeads: () => [100], chainLags: () => [0], chainNodesLying: () => [false] })
  const samples = parseSamples(await metrics.scrape())
  for (const { name, labels } of documented) {
    const seen = new Set(samples.filter((s) => s.name === name || s.name === `${name}_count`).flatMap((s) => Object.keys(s.labels).filter((l) => l !== 'le')))
    t.same([...seen].sort(), [...labels].sort(), `${name}: labels ${labels.join(', ') || 'none'}`)
  }
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
    t.ok(types.has(name), `default process metric ${name}`)
  }
  t.match(metrics.contentType, /^text\/plain; version=0\.0\.4/)
  // Unbound, the gauges read nothing: no drain, no queue, no nodes.
  t.equal(sampleValue(text, 'edge_api_draining'), 0)
  t.equal(sampleValue(text, 'edge_api_chain_queue_depth'), 0)
  t.equal(sampleValue(text, 'edge_api_requests_in_flight'), 0)
  t.equal(sampleValue(text, 'edge_api_chain_node_up'), undefined)
  t.equal(sampleValue(text, 'edge_api_build_info', { version: '', commit: '' }), 1, 'no build given: empty labels')
})

t.test('edge_api_build_info names the build, always 1', async (t) => {
  const text = await new Metrics({ version: '1.2.3', commit: 'c0ffee1' }).scrape()
  t.equal(sampleValue(text, 'edge_api_build_info', { version: '1.2.3', commit: 'c0ffee1' }), 1)
  t.equal(parseSamples(text).filter((s) => s.name === 'edge_api_build_info').length, 1, 'one series')
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

t.test(`the shed reasons are the closed list, each documented in ${METRICS_DOC} as the service spells it`, async (t) => {
  const row = documented.find((m) => m.name === 'edge_api_shed_total')
  // The reasons are the code spans of its description.
  t.same(codes(row?.what).sort(), [...SHED_REASONS].sort())
  const text = await new Metrics().scrape()
  for (const reason of SHED_REASONS) t.equal(sampleValue(text, 'edge_api_shed_total', { reason }), 0, `${reason} exported at 0 from the start`)
})

t.test(`a client's refusals (429) by reason, a closed list documented in ${METRICS_DOC}, apart from the replica's 503s; the active clients`, async (t) => {
  const row = documented.find((m) => m.name === 'edge_api_refusals_total')
  t.same(codes(row?.what).sort(), [...REFUSAL_REASONS].sort())
  const metrics = new Metrics()
  let text = await metrics.scrape()
  for (const reason of REFUSAL_REASONS) t.equal(sampleValue(text, 'edge_api_refusals_total', { reason }), 0, `${reason} exported at 0 from the start`)
  t.equal(sampleValue(text, 'edge_api_active_clients'), 0)
  metrics.watch({ draining: () => false, chainQueueDepth: () => 0, chainNodesUp: () => [], activeClients: () => 21 })
  metrics.shed('fair_share')
  metrics.shed('chainQueue')
  text = await metrics.scrape()
  t.equal(sampleValue(text, 'edge_api_refusals_total', { reason: 'fair_share' }), 1)
  t.equal(sampleValue(text, 'edge_api_shed_total', { reason: 'chainQueue' }), 1)
  t.equal(sampleValue(text, 'edge_api_active_clients'), 21)
})

t.test('requests, chain exchanges, shedding and probes by their labels', async (t) => {
  const metrics = new Metrics()
  metrics.requestAnswered('GET', '/v1/epochs/:epoch', 200, 0.003)
  metrics.requestAnswered('GET', '/v1/epochs/:epoch', 200, 0.2)
  metrics.requestAnswered('GET', UNMATCHED_ROUTE, 404, 0.001)
  metrics.exchange(1, 'ok', 0.02)
  metrics.exchange(2, 'timeout', 30)
  metrics.exchange(2, 'timeout', 30)
  metrics.shed('chainQueue')
  metrics.shed('chainQueue')
  metrics.shed('eventLoopDelay')
  metrics.readinessProbe('ok')
  metrics.waiting.heldReleased('head', 1)
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
  t.equal(sampleValue(text, 'edge_api_shed_total', { reason: 'chainQueue' }), 2)
  t.equal(sampleValue(text, 'edge_api_shed_total', { reason: 'eventLoopDelay' }), 1)
  t.equal(sampleValue(text, 'edge_api_shed_total', { reason: 'heapUsedBytes' }), 0, 'every reason is exported from the start')
  t.equal(sampleValue(text, 'edge_api_readiness_probe_total', { result: 'ok' }), 1)
  t.equal(sampleValue(text, 'edge_api_readiness_probe_total', { result: 'unavailable' }), 1)
  const buckets = parseSamples(text).filter((s) => s.name === 'http_request_duration_seconds_bucket' && s.labels.route === '/v1/epochs/:epoch')
  t.same(buckets.map((s) => s.labels.le), [...DURATION_BUCKETS.map(String), '+Inf'], 'up to the 2 m shutdown budget')
})

t.test('each instance has its own series; the process metrics are shared, not duplicated', async (t) => {
  const a = new Metrics()
  const b = new Metrics()
  a.shed('chainQueue')
  a.requestStarted()
  t.equal(sampleValue(await a.scrape(), 'edge_api_shed_total', { reason: 'chainQueue' }), 1)
  t.equal(sampleValue(await b.scrape(), 'edge_api_shed_total', { reason: 'chainQueue' }), 0)
  t.equal(sampleValue(await b.scrape(), 'edge_api_requests_in_flight'), 0)
  const once = (text: string): number => parseSamples(text).filter((s) => s.name === 'process_start_time_seconds').length
  t.equal(once(await a.scrape()), 1)
  t.equal(once(await b.scrape()), 1)
})

t.test('spans dropped, by reason (tracing on)', async (t) => {
  const metrics = new Metrics()
  const before = await metrics.scrape()
  t.equal(sampleValue(before, 'edge_api_trace_spans_dropped_total', { reason: 'queue_full' }), 0, 'every reason at 0 before a loss, so a rate sees the first one')
  t.equal(sampleValue(before, 'edge_api_trace_spans_dropped_total', { reason: 'export_failed' }), 0)
  metrics.spansDropped('queue_full', 1)
  metrics.spansDropped('queue_full', 1)
  metrics.spansDropped('export_failed', 512)
  const text = await metrics.scrape()
  t.equal(sampleValue(text, 'edge_api_trace_spans_dropped_total', { reason: 'queue_full' }), 2)
  t.equal(sampleValue(text, 'edge_api_trace_spans_dropped_total', { reason: 'export_failed' }), 512)
})

t.test('the one Metrics reports to each family: the refusals\', the cache\'s and the shared tier\'s series are in its scrape', async (t) => {
  const metrics = new Metrics()
  metrics.cacheEvicted()
  metrics.refused('rate_limit')
  metrics.sharedStoreState('up')
  metrics.sharedSubscriptionState('up')
  metrics.sharedOperation('get', 'ok')
  metrics.sharedHead('looked')
  metrics.sharedAnswer('claimed')
  const text = await metrics.scrape()
  t.equal(sampleValue(text, 'edge_api_cache_evictions_total'), 1)
  t.equal(sampleValue(text, 'edge_api_refusals_total', { reason: 'rate_limit' }), 1)
  t.same([sampleValue(text, 'edge_api_shared_store_up'), sampleValue(text, 'edge_api_shared_subscription_up')], [1, 1])
  t.equal(sampleValue(text, 'edge_api_shared_operations_total', { operation: 'get', result: 'ok' }), 1)
  t.equal(sampleValue(text, 'edge_api_shared_heads_total', { result: 'looked' }), 1)
  t.equal(sampleValue(text, 'edge_api_shared_answers_total', { result: 'claimed' }), 1)
})
