import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { MAX_WAITING } from '../../src/config/waiting-settings.js'
import { refusal } from '../fixtures/config-refusal.js'

// The caps of held long-polls and event streams (src/config/waiting-settings.ts), through
// loadConfig as the service reads them; what a cap does is test/http/waiting-caps.process.test.ts's.

const base = { CHAIN_REST_URL: 'http://node:1317' }

t.test('EDGE_API_WAITING_PER_CLIENT and EDGE_API_WAITING_MAX: 1,024 and 10,000 by default; any whole number from 1 to 100,000', async (t) => {
  t.same(loadConfig(base).waiting, { perClient: 1024, perReplica: 10_000 })
  t.same(loadConfig({ ...base, EDGE_API_WAITING_PER_CLIENT: ' 1 ', EDGE_API_WAITING_MAX: '100000' }).waiting, { perClient: 1, perReplica: MAX_WAITING })
  t.same(loadConfig({ ...base, EDGE_API_WAITING_PER_CLIENT: '', EDGE_API_WAITING_MAX: '' }).waiting, { perClient: 1024, perReplica: 10_000 }, 'empty means unset')
})

t.test('a cap that is no whole number from 1 to 100,000 refuses to boot, naming the variable', async (t) => {
  for (const key of ['EDGE_API_WAITING_PER_CLIENT', 'EDGE_API_WAITING_MAX'] as const) {
    for (const bad of ['0', '-1', '100001', '1.5', '10k', 'off', '1e3']) {
      refusal(t, { ...base, [key]: bad }, key, new RegExp(`^${key}="${bad.replace('.', '\\.')}" is invalid: must be an integer from 1 to 100000$`))
    }
  }
})
