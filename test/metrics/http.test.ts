import t from 'tap'
import { Registry } from 'prom-client'
import { HttpMetrics } from '../../src/metrics/http.js'
import { sampleValue } from '../../harness/prometheus.js'

// The public port's metrics: requests in flight, the drain and the active clients read at
// scrape time; a client's excess counted apart from the replica's shedding.

t.test('in flight, draining and active clients as they are when scraped', async (t) => {
  const registry = new Registry()
  const state = { draining: false, clients: 0 }
  const metrics = new HttpMetrics(registry, () => ({ draining: () => state.draining, activeClients: () => state.clients }))
  metrics.requestStarted()
  let text = await registry.metrics()
  t.same([sampleValue(text, 'edge_api_requests_in_flight'), sampleValue(text, 'edge_api_draining'), sampleValue(text, 'edge_api_active_clients')], [1, 0, 0])
  metrics.requestEnded()
  Object.assign(state, { draining: true, clients: 4 })
  text = await registry.metrics()
  t.same([sampleValue(text, 'edge_api_requests_in_flight'), sampleValue(text, 'edge_api_draining'), sampleValue(text, 'edge_api_active_clients')], [0, 1, 4])
})

t.test('a client\'s excess is a refusal (429), whether told as shed or refused; the replica\'s overload is shed (503)', async (t) => {
  const registry = new Registry()
  const metrics = new HttpMetrics(registry, () => ({ draining: () => false, activeClients: () => 0 }))
  metrics.shed('rate_limit')
  metrics.refused('rate_limit')
  metrics.shed('eventLoopDelay')
  const text = await registry.metrics()
  const counts = [['edge_api_refusals_total', 'rate_limit'], ['edge_api_shed_total', 'eventLoopDelay'], ['edge_api_shed_total', 'chainQueue']]
    .map(([name, reason]) => sampleValue(text, name as string, { reason: reason as string }))
  t.same(counts, [2, 1, 0], 'two refusals, one shed, none for what did not happen')
})
