// Issue 22's "done when": every dashboard panel's query and every documented query (README, docs/) returns data
// from a real Prometheus scraping a real edge-api (node dist/main.js) that has served traffic,
// shed requests and begun a drain; the alert rules load and read real series.
import { setTimeout as delay } from 'node:timers/promises'
import t from 'tap'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { ALERTS_YML, alertRules } from '../fixtures/deploy/promtool.js'
import { requireTool } from '../fixtures/deploy/tools.js'
import { freePorts } from '../../harness/ports.js'
import { startMain } from '../../harness/main-process.js'
import { dashboardPanels, dashboardQueries, metricNamesIn, documentedQueries, type OperatorQuery } from '../fixtures/operator-queries.js'
import { PrometheusServer } from '../fixtures/prometheus-server.js'
import { Metrics } from '../../src/metrics/registry.js'
import { until } from '../../harness/wait.js'

const BLS_EPOCH_DATA = '/productscience/inference/bls/epoch_data/'
// Grafana's $__rate_interval for this test's 1 s scrapes: the whole run fits in it, so every
// counter has several samples in the window.
const RATE_WINDOW = '1m'

// Metrics the service exports that have no panel yet (a later round's series, merged before
// its panel): listed here by name, on purpose, so the gap stays visible.
const NOT_YET_ON_THE_DASHBOARD: string[] = []

t.setTimeout(120_000)

t.test('the dashboard: a panel for every metric the service exports, rows of panels that do not overlap', async (t) => {
  const exported = (await new Metrics().registry.getMetricsAsJSON()).map((m) => m.name)
    .filter((name) => !/^(process|nodejs)_/.test(name) && !NOT_YET_ON_THE_DASHBOARD.includes(name))
  const read = new Set(dashboardQueries(RATE_WINDOW).flatMap((q) => metricNamesIn(q.expr)).map((name) => name.replace(/_(bucket|count|sum)$/, '')))
  t.same(exported.filter((name) => !read.has(name)), [], `every one of the ${exported.length} edge-api metrics is on a panel`)

  const panels = dashboardPanels()
  t.equal(new Set(panels.map((p) => p.id)).size, panels.length, 'panel ids are unique')
  // Each grid cell (24 columns, rows of units) belongs to one panel at most.
  const owner = new Map<string, string>()
  const problems = new Set<string>()
  for (const p of panels) {
    const { x, y, w, h } = p.gridPos
    if (x < 0 || w <= 0 || x + w > 24) problems.add(`"${p.title}" does not fit the 24 columns`)
    for (let i = x; i < x + w; i++) {
      for (let j = y; j < y + h; j++) {
        const other = owner.get(`${i},${j}`)
        if (other !== undefined) problems.add(`"${p.title}" overlaps "${other}"`)
        owner.set(`${i},${j}`, p.title)
      }
    }
  }
  t.same([...problems], [], 'the panels tile the grid without overlapping')
  const rows = panels.filter((p) => p.type === 'row').map((p) => p.title)
  t.match(rows, [/^Traffic/, /^Latency/, /^Load and drain/, /^Chain nodes/, /^Process/, /^Heights, cache, build and tracing/])
})

t.test('every dashboard and README query returns series from a real Prometheus scraping a real edge-api', async (t) => {
  if (!requireTool(t, 'prometheus', 'the dashboard and README queries against a real Prometheus')) return
  const started = performance.now()
  // Node 1 answers; node 2 refuses, so the chain panels show a node down and its failures.
  const [node1, node2] = await Promise.all([startChainSimulator(), startChainSimulator()])
  t.teardown(async () => { await node1.close(); await node2.close() })
  await node2.refuse()

  const [metricsPort] = await freePorts(1) as [number]
  const main = startMain({
    CHAIN_REST_URL: `${node1.url},${node2.url}`,
    EDGE_API_HOST: '127.0.0.1',
    EDGE_API_PORT: '0',
    EDGE_API_METRICS_PORT: String(metricsPort),
    // One chain read at a time, 16 waiting: a burst of distinct reads is shed (chainQueue).
    EDGE_API_CHAIN_CONCURRENCY: '1',
    EDGE_API_DRAIN_ANNOUNCE: '8s',
    EDGE_API_SHUTDOWN_BUDGET: '10s',
    // The answer cache on, as a pool would run it, so its panels have series.
    EDGE_API_CACHE_SIZE: '16MiB'
  })
  t.teardown(() => { if (main.child.exitCode === null) main.child.kill('SIGKILL') })
  const origin = `http://127.0.0.1:${await main.port()}`

  const prometheus = await PrometheusServer.start({ targets: [`127.0.0.1:${metricsPort}`], ruleFiles: [ALERTS_YML] })
  t.teardown(() => prometheus.stop())
  await until(async () => {
    const answer = await prometheus.query('up{job="edge-api"} == 1')
    return answer.ok && answer.samples.length === 1
  }, 'Prometheus to scrape edge-api', { timeoutMs: 20_000, intervalMs: 200 })

  // Steady traffic until the drain has been scraped: /v1 answers (200 and 404), the
  // balancer's checks (readiness probes every 3 s), an unmatched path.
  const stopTraffic = new AbortController()
  const statuses = new Map<number, number>()
  const get = async (path: string): Promise<void> => {
    const res = await fetch(`${origin}${path}`).catch(() => undefined)
    if (res === undefined) return
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
    await res.arrayBuffer()
  }
  const steady = (async () => {
    while (!stopTraffic.signal.aborted) {
      await Promise.all(['/v1/status', '/v1/governance/models', '/v1/pricing', '/readyz', '/healthz', '/no/such/route'].map(get))
      await delay(100)
    }
  })()

  // Two bursts of distinct slow chain reads, a few scrapes apart: beyond the one in flight and
  // the 16 waiting, each is shed (503, chainQueue); 200 ms each keeps the queue full while the burst arrives.
  const shedBurst = async (): Promise<void> => {
    node1.latency(200, BLS_EPOCH_DATA)
    await Promise.all(Array.from({ length: 30 }, (_, i) => get(`/v1/bls/epoch/${i + 1}`)))
    node1.clearFaults()
  }
  // Waiting clients, for the held-durations panel: a long-poll held a second at the head (timed
  // out: no block lands here) and a stream its client closes. Twice, a few scrapes apart: their
  // series are born with their first observation, and a rate needs an increase after it.
  const waitingClients = async (): Promise<void> => {
    const head = (await fetch(`${origin}/v1/epochs/latest`)).headers.get('x-block-height')
    const stream = new AbortController()
    const streamRes = await fetch(`${origin}/v1/events`, { signal: stream.signal })
    const held = await fetch(`${origin}/v1/epochs/latest?afterHeight=${head}&wait=1`)
    await held.arrayBuffer()
    stream.abort()
    await streamRes.body?.cancel().catch(() => {})
    t.equal(held.status, 200, 'a long-poll was held and answered')
  }
  // Each step two scrapes after the one before, not a fixed 3 s: a loaded machine delays a
  // scrape past any fixed wait, and a quiet one needs ~1.5 s (issue 54).
  const scrapedTwice = async (what: string): Promise<void> => {
    const since = Date.now() / 1000
    const seen = new Set<number>()
    await until(async () => {
      const answer = await prometheus.query('timestamp(up{job="edge-api"})')
      const at = answer.ok ? answer.samples[0]?.value ?? 0 : 0
      if (at > since) seen.add(at)
      return seen.size >= 2
    }, `two scrapes after ${what}`, { timeoutMs: 20_000, intervalMs: 100 })
  }
  await waitingClients()
  await scrapedTwice('the first waiting clients')
  await shedBurst()
  await scrapedTwice('the first burst')
  await shedBurst()
  await scrapedTwice('the second burst')
  t.ok((statuses.get(503) ?? 0) >= 2, `requests were shed (${statuses.get(503)} × 503)`)
  await waitingClients()
  await scrapedTwice('the second waiting clients')
  const beforeDrain = Date.now() / 1000

  // The drain: SIGTERM, then 8 s of announcement (room for a late scrape on a loaded machine)
  // while it still serves; the first scrape that sees it is the moment every query is asked about.
  main.child.kill('SIGTERM')
  await until(async () => {
    const answer = await prometheus.query('edge_api_draining == 1')
    return answer.ok && answer.samples.length === 1
  }, 'Prometheus to scrape edge_api_draining = 1', { timeoutMs: 7000, intervalMs: 100 })
  const duringDrain = Date.now() / 1000
  stopTraffic.abort()
  await steady

  // Every query at the same instant (the replica is alive and draining then), even after it exits.
  const check = async (queries: OperatorQuery[]): Promise<void> => {
    for (const { source, expr } of queries) {
      const answer = await prometheus.query(expr, duringDrain)
      if (!answer.ok) {
        t.fail(`${source} does not run: ${answer.error}\n${expr}`)
        continue
      }
      const finite = answer.samples.filter((s) => Number.isFinite(s.value))
      t.ok(finite.length > 0, `${source}: ${answer.samples.length} series, ${finite.length} with a value`, { expr })
    }
  }
  const panels = dashboardQueries(RATE_WINDOW)
  const withQueries = dashboardPanels().filter((p) => p.type !== 'row' && p.type !== 'text')
  t.ok(withQueries.every((p) => (p.targets ?? []).length > 0), 'every graph panel has a query')
  t.ok(panels.length >= 15, `${panels.length} dashboard queries`)
  await check(panels)
  const readme = documentedQueries()
  t.ok(readme.length >= 3, `${readme.length} documented queries (README and docs/)`)
  await check(readme)

  const shed = await prometheus.query('sum by (reason) (rate(edge_api_shed_total[1m]))', duringDrain)
  t.ok(shed.ok && shed.samples.some((s) => s.metric.reason === 'chainQueue' && s.value > 0), 'the bursts are shed as chainQueue, the label value the README names', { shed })

  // Every metric the dashboard, the README and the alerts read exists in Prometheus: a metric
  // renamed in the service (or misspelt in a query) fails here by name.
  const known = new Set(await prometheus.metricNames())
  const rules = alertRules()
  for (const { source, expr } of [...panels, ...readme, ...rules.map((r) => ({ source: `alert ${r.alert}`, expr: r.expr }))]) {
    const missing = metricNamesIn(expr).filter((name) => !known.has(name))
    t.same(missing, [], `${source} reads only metrics that exist`)
  }

  // The alert rules, on real series: every expression runs; three of them say what is true here.
  for (const rule of rules) {
    const answer = await prometheus.query(rule.expr, duringDrain)
    t.ok(answer.ok, `alert ${rule.alert}: its expression runs${answer.ok ? '' : `: ${answer.error}`}`)
  }
  const expr = (name: string): string => rules.find((r) => r.alert === name)?.expr as string
  t.match(await prometheus.query(expr('EdgeApiChainNodeDown'), duringDrain), { ok: true, samples: [{ metric: { node: '2' } }] },
    'EdgeApiChainNodeDown\'s condition holds for node 2 (refused) only')
  t.match(await prometheus.query(expr('EdgeApiNoReplicaReady'), beforeDrain), { ok: true, samples: [] }, 'EdgeApiNoReplicaReady\'s condition is false while the replica serves')
  t.match(await prometheus.query(expr('EdgeApiChainHeightsUnknown'), beforeDrain), { ok: true, samples: [] }, 'EdgeApiChainHeightsUnknown\'s condition is false while a node tells its head')
  // (A comparison keeps its left side: the condition's one sample is the count of ready replicas, 0.)
  t.same(await prometheus.query(expr('EdgeApiNoReplicaReady'), duringDrain), { ok: true, samples: [{ metric: {}, value: 0 }] }, 'and true once the only replica drains')
  const loaded = await (await fetch(`${prometheus.origin}/api/v1/rules`)).json() as { data: { groups: Array<{ rules: Array<{ name: string, health: string }> }> } }
  t.same(loaded.data.groups.flatMap((g) => g.rules).map((r) => [r.name, r.health]), rules.map((r) => [r.alert, 'ok']), 'Prometheus loaded and evaluates every rule')

  t.equal((await main.exited).code, 0, 'the drain ends with exit 0')
  t.comment(`${Math.round((performance.now() - started) / 1000)} s`)
})
