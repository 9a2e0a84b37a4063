import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { refusal } from '../fixtures/config-refusal.js'

// Where the service listens and how it leaves (src/config/listener-settings.ts), through
// loadConfig as the service reads them.

const base = { CHAIN_REST_URL: 'http://node:1317' }

t.test('metrics: their own port (or off) and address, which defaults to EDGE_API_HOST', async (t) => {
  t.match(loadConfig({ ...base, EDGE_API_HOST: '127.0.0.1' }), { metricsPort: 9464, metricsHost: '127.0.0.1' })
  t.match(loadConfig({ ...base, EDGE_API_METRICS_PORT: ' 9100 ', EDGE_API_METRICS_HOST: '::' }), { metricsPort: 9100, metricsHost: '::' })
  t.match(loadConfig({ ...base, EDGE_API_METRICS_PORT: '', EDGE_API_METRICS_HOST: '' }), { metricsPort: 9464, metricsHost: '0.0.0.0' }, 'empty means unset')
  t.match(loadConfig({ ...base, EDGE_API_METRICS_PORT: '1' }), { metricsPort: 1 })
  t.match(loadConfig({ ...base, EDGE_API_METRICS_PORT: '65535' }), { metricsPort: 65535 })
  const off = loadConfig({ ...base, EDGE_API_METRICS_PORT: 'off' })
  t.equal(off.metricsPort, undefined, 'off serves no metrics')
  t.ok('metricsPort' in off)
})

t.test('the drain announce window is 0 or at least 5s', async (t) => {
  t.equal(loadConfig({ ...base, EDGE_API_DRAIN_ANNOUNCE: '5s' }).drainAnnounceMs, 5000)
  t.equal(loadConfig({ ...base, EDGE_API_DRAIN_ANNOUNCE: '0s' }).drainAnnounceMs, 0)
  refusal(t, { ...base, EDGE_API_DRAIN_ANNOUNCE: '4s' }, 'EDGE_API_DRAIN_ANNOUNCE',
    /^EDGE_API_DRAIN_ANNOUNCE="4s" is invalid: must be 0 \(no balancer in front\) or at least 5s: the router needs up to ~4s/)
  refusal(t, { ...base, EDGE_API_DRAIN_ANNOUNCE: '4999ms' }, 'EDGE_API_DRAIN_ANNOUNCE', /at least 5s/)
  refusal(t, { ...base, EDGE_API_DRAIN_ANNOUNCE: '-1s' }, 'EDGE_API_DRAIN_ANNOUNCE', /at least 5s/)
})
