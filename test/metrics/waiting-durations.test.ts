import t from 'tap'
import { startListeningApp } from '../fixtures/listening-app.js'
import { openSse } from '../fixtures/sse-client.js'
import { until } from '../../harness/wait.js'

// Held long-polls and event streams are timed in their own histograms, never in
// http_request_duration_seconds, which the slow-p99 alert reads (at 1365d2e two long-polls
// among 100 reads put a route's p99 at ~3.75 s, over the alert's 2.5 s).

const ROUTE = '/v1/epochs/latest'

const sample = (text: string, series: string): number => Number(new RegExp(`^${series.replace(/[{}"/]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(text)?.[1] ?? 0)

t.test('a held long-poll and a stream: in their own histograms, not in http_request_duration_seconds', async (t) => {
  const service = await startListeningApp(t, { announceMs: 50, budgetMs: 10_000 })
  const scrape = async (): Promise<string> => await (await fetch(`http://127.0.0.1:${service.metricsPort as number}/metrics`)).text()
  const head = service.sim.clock.height
  for (let i = 0; i < 3; i++) t.equal((await fetch(`${service.origin}${ROUTE}`)).status, 200)
  const held = await fetch(`${service.origin}${ROUTE}?afterHeight=${head}&wait=1`)
  t.equal(held.status, 200, 'held for its wait, then answered')
  const stream = await openSse(`${service.origin}/v1/events`)
  await stream.next((event) => event.id === String(head))
  await new Promise((resolve) => setTimeout(resolve, 300))
  stream.close()
  await until(async () => sample(await scrape(), 'edge_api_event_stream_duration_seconds_count') === 1, 'the stream\'s lifetime recorded')
  const text = await scrape()
  t.equal(sample(text, 'http_request_duration_seconds_count{method="GET",route="/v1/epochs/:epoch",status_code="200"}'), 3, 'only the three plain reads timed as requests')
  t.notMatch(text, /^http_request_duration_seconds_count\{[^}]*route="\/v1\/events"/m, 'the stream not timed as a request')
  t.equal(sample(text, 'edge_api_held_request_duration_seconds_count{outcome="timeout"}'), 1, 'the long-poll held to its wait')
  t.ok(sample(text, 'edge_api_held_request_duration_seconds_sum{outcome="timeout"}') >= 1, 'for at least its 1 s')
  t.ok(sample(text, 'edge_api_event_stream_duration_seconds_sum') >= 0.3, 'the stream\'s lifetime, closed by its client')
})
