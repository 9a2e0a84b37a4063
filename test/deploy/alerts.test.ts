import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ALERTS_TESTS, ALERTS_YML, PROMETHEUS_YML, alertRules, promtool } from '../fixtures/deploy/promtool.js'
import { requireTool } from '../fixtures/deploy/tools.js'

// The alerts the pool needs (issue 22), by name: a rule dropped or renamed fails here.
const ALERTS = ['EdgeApiHigh5xxShare', 'EdgeApiShedding', 'EdgeApiClientOverShare', 'EdgeApiNoReplicaReady', 'EdgeApiChainNodeDown', 'EdgeApiChainNodeLying', 'EdgeApiChainHeightsUnknown', 'EdgeApiDrainTooLong', 'EdgeApiSlowP99']

t.setTimeout(120_000)

t.test('every alert waits (for:), has a severity, says what is wrong and what to do in one line each', async (t) => {
  const rules = alertRules()
  t.same(rules.map((r) => r.alert), ALERTS)
  for (const rule of rules) {
    t.match(rule.for, /^\d+[smh](\d+[smh])?$/, `${rule.alert}: for: ${rule.for}`)
    t.ok(['critical', 'warning'].includes(rule.labels?.severity ?? ''), `${rule.alert}: severity ${rule.labels?.severity}`)
    for (const key of ['summary', 'description']) {
      const text = rule.annotations?.[key] ?? ''
      t.ok(text.length > 20 && !text.includes('\n'), `${rule.alert}: a one-line ${key}`)
    }
  }
})

t.test('promtool check rules accepts the rules, and rejects a broken one', async (t) => {
  if (!requireTool(t, 'promtool', 'the alert rule checks')) return
  const run = promtool('check', 'rules', ALERTS_YML)
  t.equal(run.status, 0, run.output)
  t.match(run.output, `SUCCESS: ${ALERTS.length} rules found`)

  const dir = mkdtempSync(join(tmpdir(), 'edge-api-alerts-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const broken = join(dir, 'alerts.yml')
  writeFileSync(broken, readFileSync(ALERTS_YML, 'utf8').replace('max by (node) (edge_api_chain_node_up) == 0', 'max by (node) (edge_api_chain_node_up == 0'))
  const rejected = promtool('check', 'rules', broken)
  t.not(rejected.status, 0, 'an unbalanced parenthesis fails the check')
  t.match(rejected.output, /parse error/)
})

t.test('promtool test rules: each alert fires on its series and stays silent on the healthy look-alikes', async (t) => {
  if (!requireTool(t, 'promtool', 'the alert unit tests')) return
  const run = promtool('test', 'rules', ALERTS_TESTS)
  t.equal(run.status, 0, run.output)
  t.match(run.output, 'SUCCESS')

  // At least one firing and one silent case per alert.
  const tests = readFileSync(ALERTS_TESTS, 'utf8')
  for (const alert of ALERTS) {
    const cases = [...tests.matchAll(new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:( \\[\\])?`, 'g'))]
    t.ok(cases.some((c) => c[1] === undefined), `${alert} has a firing case`)
    t.ok(cases.some((c) => c[1] !== undefined), `${alert} has a silent case`)
  }

  // The unit tests can fail: the same tests (in the same relative place) against rules with
  // two thresholds changed.
  const dir = mkdtempSync(join(tmpdir(), 'edge-api-alerts-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const compose = join(dir, 'compose', 'prometheus')
  const testDir = join(dir, 'test', 'deploy')
  for (const d of [compose, testDir]) mkdirSync(d, { recursive: true })
  writeFileSync(join(compose, 'alerts.yml'), readFileSync(ALERTS_YML, 'utf8').replace('> 0.05', '> 0.5').replace('for: 2m30s', 'for: 1m'))
  copyFileSync(ALERTS_TESTS, join(testDir, 'alerts.promtool.yml'))
  const failed = promtool('test', 'rules', join(testDir, 'alerts.promtool.yml'))
  t.not(failed.status, 0, 'changed thresholds fail the unit tests')
  t.match(failed.output, /name: high 5xx share on \/v1 fires[\s\S]*got:\[\]/, 'the 5xx alert no longer fires')
  t.match(failed.output, /name: drain too long stays silent/, 'and the drain alert fires for a drain within its budget')
})

t.test('promtool check config accepts the compose Prometheus configuration with its rule file', async (t) => {
  if (!requireTool(t, 'promtool', 'the Prometheus configuration check')) return
  const run = promtool('check', 'config', PROMETHEUS_YML)
  t.equal(run.status, 0, run.output)
  t.match(run.output, 'SUCCESS: 1 rule files found')
  t.match(run.output, `SUCCESS: ${ALERTS.length} rules found`, 'and the rules it loads')
})
