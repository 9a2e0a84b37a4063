import { Histogram as PromHistogram, Registry, type Metric } from 'prom-client'
import t from 'tap'
import { Histogram } from '../../src/metrics/histogram.js'
import { DURATION_BUCKETS } from '../../src/metrics/instruments.js'

// Our histogram must read, to Prometheus and to anything that reads prom-client's JSON, exactly
// as prom-client's own: the dashboards, alerts and recording rules were written against it.
type Label = 'method' | 'route' | 'status_code'
const OPTIONS = {
  name: 'http_request_duration_seconds',
  help: 'Time to answer an HTTP request, "quoted" and \\ back-slashed\nover two lines',
  labelNames: ['method', 'route', 'status_code'] as Label[],
  buckets: DURATION_BUCKETS
}

function pair (): { ours: Histogram<Label>, theirs: PromHistogram<Label>, oursRegistry: Registry, theirsRegistry: Registry } {
  const oursRegistry = new Registry()
  const theirsRegistry = new Registry()
  const ours = new Histogram(OPTIONS)
  oursRegistry.registerMetric(ours as unknown as Metric)
  const theirs = new PromHistogram({ ...OPTIONS, registers: [theirsRegistry] })
  return { ours, theirs, oursRegistry, theirsRegistry }
}

// Every bound itself (le is inclusive), just above each, 0, beyond the last bucket, and a
// sum whose float rounding shows if the additions differ in order.
const VALUES = [0, ...DURATION_BUCKETS, ...DURATION_BUCKETS.map((b) => b + 1e-9), 0.1 + 0.2, 1e-7, 121, 3600]
const LABELS: Array<Record<Label, string | number>> = [
  { method: 'GET', route: '/v1/status', status_code: 200 },
  { method: 'GET', route: 'unmatched', status_code: 404 },
  // Label values Prometheus' text format escapes.
  { method: 'POST', route: '/v1/"odd"\\path\nnext', status_code: '503' },
  { method: 'GET', route: '/v1/status', status_code: 304 }
]

t.test('the same observations give the same text and the same JSON as prom-client\'s histogram', async (t) => {
  const { ours, theirs, oursRegistry, theirsRegistry } = pair()
  t.equal(await oursRegistry.metrics(), await theirsRegistry.metrics(), 'no series yet: HELP and TYPE only')
  VALUES.forEach((value, i) => {
    const labels = LABELS[i % LABELS.length] as Record<Label, string | number>
    ours.series(labels).observe(value)
    theirs.labels(labels).observe(value)
  })
  const text = await oursRegistry.metrics()
  t.equal(text, await theirsRegistry.metrics())
  t.match(text, 'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/v1/status",status_code="200"} ', 'the usual lines')
  t.same(await oursRegistry.getMetricsAsJSON(), await theirsRegistry.getMetricsAsJSON())
  // As Metrics merges its registry with the process metrics' one.
  t.equal(await Registry.merge([oursRegistry, new Registry()]).metrics(), await Registry.merge([theirsRegistry, new Registry()]).metrics())
})

t.test('a label set has one series, however its values are spelled and however often it is asked for', async (t) => {
  const { ours, theirs, oursRegistry, theirsRegistry } = pair()
  const first = ours.series({ method: 'GET', route: '/a', status_code: 200 })
  t.equal(ours.series({ status_code: 200, route: '/a', method: 'GET' }), first)
  first.observe(0.2)
  ours.series({ method: 'GET', route: '/a', status_code: 200 }).observe(0.3)
  theirs.observe({ method: 'GET', route: '/a', status_code: 200 }, 0.2)
  theirs.observe({ method: 'GET', route: '/a', status_code: 200 }, 0.3)
  t.equal(await oursRegistry.metrics(), await theirsRegistry.metrics())
  t.equal(first.count, 2)
})

t.test('resetMetrics forgets every series, as it does prom-client\'s', async (t) => {
  const { ours, theirs, oursRegistry, theirsRegistry } = pair()
  ours.series({ method: 'GET', route: '/a', status_code: 200 }).observe(1)
  theirs.observe({ method: 'GET', route: '/a', status_code: 200 }, 1)
  oursRegistry.resetMetrics()
  theirsRegistry.resetMetrics()
  t.equal(await oursRegistry.metrics(), await theirsRegistry.metrics())
  t.notMatch(await oursRegistry.metrics(), '_count')
})

t.test('a series found by its key is the one of its labels, and is forgotten with every series', async (t) => {
  const { ours, theirs, oursRegistry, theirsRegistry } = pair()
  const labels = { method: 'GET', route: '/a', status_code: 200 }
  ours.seriesByKey('GET 200 /a', labels).observe(1)
  ours.seriesByKey('GET 200 /a', labels).observe(2)
  theirs.observe(labels, 1)
  theirs.observe(labels, 2)
  t.equal(await oursRegistry.metrics(), await theirsRegistry.metrics())
  oursRegistry.resetMetrics()
  theirsRegistry.resetMetrics()
  ours.seriesByKey('GET 200 /a', labels).observe(3)
  theirs.observe(labels, 3)
  t.equal(await oursRegistry.metrics(), await theirsRegistry.metrics(), 'after a reset, a new series')
})

t.test('a series found by its label values is the one of its labels, one per label set, and is forgotten with every series', async (t) => {
  const { ours, theirs, oursRegistry, theirsRegistry } = pair()
  ours.seriesOf('GET', '/a', 200).observe(1)
  ours.seriesOf('GET', '/a', 200).observe(2)
  ours.seriesOf('GET', '/a', 404).observe(3)
  ours.seriesOf('HEAD', '/a', 200).observe(4)
  for (const [labels, value] of [[{ method: 'GET', route: '/a', status_code: 200 }, 1], [{ method: 'GET', route: '/a', status_code: 200 }, 2], [{ method: 'GET', route: '/a', status_code: 404 }, 3], [{ method: 'HEAD', route: '/a', status_code: 200 }, 4]] as const) theirs.observe(labels, value)
  t.equal(await oursRegistry.metrics(), await theirsRegistry.metrics())
  oursRegistry.resetMetrics()
  theirsRegistry.resetMetrics()
  ours.seriesOf('GET', '/a', 200).observe(5)
  theirs.observe({ method: 'GET', route: '/a', status_code: 200 }, 5)
  t.equal(await oursRegistry.metrics(), await theirsRegistry.metrics(), 'after a reset, a new series')
})

t.test('a value that is not a finite number is refused, as prom-client refuses it, and counts nowhere', async (t) => {
  const { ours, theirs } = pair()
  const series = ours.series({ method: 'GET', route: '/a', status_code: 200 })
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
    t.throws(() => series.observe(bad), TypeError)
    t.throws(() => theirs.observe({ method: 'GET', route: '/a', status_code: 200 }, bad), TypeError)
  }
  t.equal(series.count, 0)
  t.equal(series.sum, 0)
})
