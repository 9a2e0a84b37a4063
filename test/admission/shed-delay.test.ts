import t from 'tap'
import { loadConfig, SETTINGS } from '../../src/config.js'
import { parseDuration } from '../../src/duration.js'
import { ConfigError } from '../../src/errors.js'
import { BOOT_GRACE_MS, LOAD_SHEDDING_DEFAULTS } from '../../src/admission/admission.js'
import { POLICY_DEFAULTS } from '../../src/admission/pie.js'
import { createLogger } from '../../src/logger.js'
import { startService } from '../../src/service.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { ScriptedLoop } from '../fixtures/scripted-loop.js'

// EDGE_API_SHED_DELAY is the target of /v1's load shedding (docs/overload.md): a replica whose
// event loop lags longer than it, for longer than the burst allowance, sheds; one within it does not.

t.test('the setting\'s default is the policy\'s default target', async (t) => {
  t.equal(parseDuration(SETTINGS.EDGE_API_SHED_DELAY.default), LOAD_SHEDDING_DEFAULTS.maxEventLoopDelay)
})

t.test('EDGE_API_SHED_DELAY: 0 or 5ms–10s, refused naming the variable', async (t) => {
  const base = { CHAIN_REST_URL: 'http://node:1317' }
  t.equal(loadConfig(base).shedDelayMs, 20)
  t.equal(loadConfig({ ...base, EDGE_API_SHED_DELAY: '0' }).shedDelayMs, 0)
  t.equal(loadConfig({ ...base, EDGE_API_SHED_DELAY: '250ms' }).shedDelayMs, 250)
  t.equal(loadConfig({ ...base, EDGE_API_SHED_DELAY: '10s' }).shedDelayMs, 10_000)
  for (const bad of ['4ms', '11s', '20', 'soon']) {
    const error = t.throws(() => loadConfig({ ...base, EDGE_API_SHED_DELAY: bad })) as ConfigError
    t.ok(error instanceof ConfigError)
    t.equal(error.variable, 'EDGE_API_SHED_DELAY')
    t.match(error.message, new RegExp(`^EDGE_API_SHED_DELAY="${bad}" is invalid: must be `))
  }
})

t.test('a listening service sheds above the configured delay, and not below it or with 0', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  // The event loop lags 80 ms for longer than the burst allowance, past the boot's grace.
  const behind = { delayMs: 80, utilization: 1 }
  const samples = (BOOT_GRACE_MS + POLICY_DEFAULTS.burstAllowanceMs) / 100 + 5
  for (const [setting, sheds] of [['20ms', true], ['1s', false], ['0', false]] as const) {
    const loop = new ScriptedLoop()
    const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_DRAIN_ANNOUNCE: '0', EDGE_API_METRICS_PORT: 'off', EDGE_API_SHED_DELAY: setting })
    const service = await startService({ config, logger: createLogger('silent'), loadShedding: { sampler: loop } })
    loop.feed(behind, samples)
    const statuses = new Set<number>()
    for (let i = 0; i < 40; i++) statuses.add((await fetch(`http://127.0.0.1:${service.port}/v1/status`)).status)
    await service.close()
    t.equal(statuses.has(503), sheds, `EDGE_API_SHED_DELAY=${setting}: ${[...statuses].join(', ')}`)
    t.ok(statuses.has(200), 'the rest is served')
  }
})
