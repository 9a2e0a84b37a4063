// Issue 13's "done when", on real sockets: the service as main.ts starts it (service.ts), a
// slow request in flight and a drain, while Prometheus scrapes the metrics port.
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { startService } from '../../src/service.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { LogLines } from '../../harness/log-lines.js'
import { sampleValue } from '../../harness/prometheus.js'
import { until } from '../../harness/wait.js'

const MODELS_ALL = '/productscience/inference/inference/models_all'
const SLOW_MS = 4000

t.test('a scrape shows the request in flight, the drain, durations by route and chain node, node health and probes', async (t) => {
  const [node1, node2] = await Promise.all([startChainSimulator(), startChainSimulator()])
  t.teardown(async () => { await node1.close(); await node2.close() })
  await node2.refuse()
  const config = loadConfig({ CHAIN_REST_URL: `${node1.url},${node2.url}`, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0' })
  const service = await startService({
    config,
    logger: createLogger('info', new LogLines().stream),
    drainWindows: { announceMs: 200, budgetMs: 30_000 },
    metricsPort: 0,
    // CPU shedding would only make this test depend on the machine's load.
    loadShedding: { maxEventLoopUtilization: 0, maxEventLoopDelay: 0 }
  })
  t.teardown(() => service.close())
  const origin = `http://127.0.0.1:${service.port}`
  t.ok(service.metricsPort !== undefined && service.metricsPort !== service.port, `metrics on a port of their own (${service.metricsPort})`)
  const scrape = async (): Promise<string> => {
    const res = await fetch(`http://127.0.0.1:${service.metricsPort}/metrics`)
    t.equal(res.status, 200)
    return res.text()
  }

  let text = await scrape()
  t.equal(sampleValue(text, 'edge_api_draining'), 0, 'not draining before SIGTERM')
  t.equal(sampleValue(text, 'edge_api_requests_in_flight'), 0)
  const publicMetrics = await fetch(`${origin}/metrics`)
  t.equal(publicMetrics.status, 404, '/metrics on the public port is 404')
  await publicMetrics.arrayBuffer()

  // Readiness probes both nodes: node 1 answers, node 2 refuses (and is marked down).
  t.equal((await fetch(`${origin}/readyz`)).status, 200)
  text = await scrape()
  t.equal(sampleValue(text, 'edge_api_readiness_probe_total', { result: 'ok' }), 1)
  t.equal(sampleValue(text, 'edge_api_readiness_probe_total', { result: 'unavailable' }), 1)
  t.equal(sampleValue(text, 'edge_api_chain_node_up', { node: '1' }), 1)
  t.equal(sampleValue(text, 'edge_api_chain_node_up', { node: '2' }), 0, 'node 2 is down')
  t.ok((sampleValue(text, 'edge_api_chain_request_duration_seconds_count', { node: '2', outcome: 'unavailable' }) ?? 0) >= 1)

  node1.latency(SLOW_MS, MODELS_ALL)
  const slow = fetch(`${origin}/v1/governance/models`)
  await until(async () => sampleValue(await scrape(), 'edge_api_requests_in_flight') === 1, 'the slow request in flight')
  t.equal(sampleValue(await scrape(), 'edge_api_requests_in_flight'), 1, 'the scrapes themselves are not counted')

  service.drain.signal('SIGTERM')
  text = await scrape()
  t.equal(sampleValue(text, 'edge_api_draining'), 1, 'draining from the latch on')
  t.equal(sampleValue(text, 'edge_api_requests_in_flight'), 1, 'the slow request still in flight')
  t.not(service.drain.state, 'stopped', 'the drain waits for the slow request')

  const answered = await slow
  t.equal(answered.status, 200)
  await answered.arrayBuffer()
  t.equal((await service.drain.outcome).code, 0)

  // The public listener is closed; the metrics listener still answers.
  text = await scrape()
  t.equal(sampleValue(text, 'edge_api_draining'), 1)
  t.equal(sampleValue(text, 'edge_api_requests_in_flight'), 0)
  const route = { method: 'GET', route: '/v1/governance/models', status_code: '200' }
  t.equal(sampleValue(text, 'http_request_duration_seconds_count', route), 1)
  t.ok((sampleValue(text, 'http_request_duration_seconds_sum', route) as number) >= SLOW_MS / 1000 - 0.1, 'its duration')
  t.equal(sampleValue(text, 'http_request_duration_seconds_count', { route: '/readyz', status_code: '200' }), 1)
  t.equal(sampleValue(text, 'http_request_duration_seconds_count', { route: 'unmatched', status_code: '404' }), 1, 'the public /metrics 404')
  // At least: a loaded run counted one more (its requests are in the message, to tell which).
  t.ok((sampleValue(text, 'edge_api_chain_request_duration_seconds_count', { node: '1', outcome: 'ok' }) ?? 0) >= 2, `the probe and the read (node 1 was asked ${JSON.stringify(node1.requests)})`)
  t.ok((sampleValue(text, 'edge_api_chain_request_duration_seconds_sum', { node: '1', outcome: 'ok' }) as number) >= SLOW_MS / 1000 - 0.1)
  t.equal(sampleValue(text, 'edge_api_chain_queue_depth'), 0)
  t.ok(text.includes('process_cpu_user_seconds_total'), 'and the default process metrics')
})
