import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'
import { startListeningApp } from '../../fixtures/listening-app.js'
import { openSse } from '../../fixtures/sse-client.js'
import { AHEAD_WINDOW } from '../../../src/waiting/event-stream.js'

t.test('a stream sends each new head once, in order, with its height as id; resumes from Last-Event-ID', async (t) => {
  const service = await startListeningApp(t, { announceMs: 50, budgetMs: 10_000 })
  const head = service.sim.clock.height
  const stream = await openSse(`${service.origin}/v1/events`)
  t.equal(stream.status, 200)
  t.match(stream.headers['content-type'], /^text\/event-stream/)
  t.equal(stream.events[0]?.retry ?? (await stream.next((e) => e.retry !== undefined)).retry, 3000, 'a retry: hint first')
  const first = await stream.next((e) => e.event === 'head')
  t.equal(first.id, String(head))
  t.same(JSON.parse(first.data as string), { height: head })
  service.sim.clock.advance(3)
  await stream.next((e) => e.id === String(head + 3))
  t.same(stream.events.filter((e) => e.event === 'head').map((e) => e.id), [head, head + 1, head + 2, head + 3].map(String))
  stream.close()
  service.sim.clock.advance(2)
  const resumed = await openSse(`${service.origin}/v1/events`, { 'last-event-id': String(head + 3) })
  await resumed.next((e) => e.id === String(head + 5))
  t.same(resumed.events.filter((e) => e.event === 'head').map((e) => e.id), [head + 4, head + 5].map(String), 'replayed from the cursor, nothing missed')
  resumed.close()
  const first2 = await openSse(`${service.origin}/v1/events?lastEventId=${head + 4}`)
  await first2.next((e) => e.id === String(head + 5))
  t.same(first2.events.filter((e) => e.event === 'head').map((e) => e.id), [String(head + 5)], '?lastEventId on a first connect')
  first2.close()
  const far = await openSse(`${service.origin}/v1/events`, { 'last-event-id': String(head - 2000) })
  const reset = await far.next((e) => e.event === 'reset')
  t.same(JSON.parse(reset.data as string), { height: head + 5 }, 'beyond the replay window: reset')
  await far.next((e) => e.id === String(head + 5))
  far.close()
  const ahead = await openSse(`${service.origin}/v1/events`, { 'last-event-id': String(head + 7) })
  service.sim.clock.advance(3)
  await ahead.next((e) => e.id === String(head + 8))
  t.same(ahead.events.filter((e) => e.event === 'head').map((e) => e.id), [String(head + 8)], 'never an event at or below the cursor')
  ahead.close()
  // A cursor no replica of this chain is near (another network's): reset to the head at once, not silence for the stream's age.
  const farAhead = await openSse(`${service.origin}/v1/events`, { 'last-event-id': String(head + 8 + AHEAD_WINDOW + 1) })
  const resetAhead = await farAhead.next((e) => e.event === 'reset', 'a reset for a cursor far above the head')
  t.same(JSON.parse(resetAhead.data as string), { height: head + 8 }, 'far above the head: reset to the head')
  await farAhead.next((e) => e.id === String(head + 8))
  farAhead.close()
})

t.test('a bad Last-Event-ID is a 400', async (t) => {
  const service = await startListeningApp(t, { announceMs: 50, budgetMs: 10_000 })
  const res = await fetch(`${service.origin}/v1/events`, { headers: { 'last-event-id': 'abc' } })
  t.equal(res.status, 400)
  t.match(((await res.json()) as { message: string }).message, /must be an event id of this stream: <height> or <height>.<n>/)
})

t.test('over the cap: 200 text/event-stream with the wait as its retry:, ended (an EventSource comes back; a 429 would end it)', async (t) => {
  const { app } = await buildTestApp(t, { env: { EDGE_API_WAITING_PER_CLIENT: '1', EDGE_API_WAITING_MAX: '2' } })
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  const open = await openSse(`${origin}/v1/events`)
  const sameClient = await openSse(`${origin}/v1/events`)
  t.equal(sameClient.status, 200)
  t.match(sameClient.headers['content-type'], /^text\/event-stream/)
  await sameClient.endedWithin('the refused stream')
  t.same(sameClient.events, [{ comment: 'too many requests waiting for the chain (long-polls and event streams together: this client is at its limit); retry later', retry: 5000 }], 'why, and the retry:, then its end')
  const other = await openSse(`${origin}/v1/events`, {}, '127.0.0.2')
  t.equal(other.status, 200, 'another client is served')
  const refused = await fetch(`${origin}/v1/events`)
  t.equal(refused.status, 200)
  t.equal(refused.headers.get('retry-after'), '5', 'Retry-After for clients that read it')
  t.match(await refused.text(), /^: too many requests waiting for the chain \(long-polls and event streams together: this replica is at its limit\); retry later\nretry: 5000\n\n$/)
  open.close()
  other.close()
})

t.test('the drain: streams flow through the announce, then each ends within the spread with its own retry:; never a 503', async (t) => {
  const service = await startListeningApp(t, { announceMs: 300, budgetMs: 20_000 })
  const head = service.sim.clock.height
  const streams = await Promise.all(Array.from({ length: 10 }, async () => await openSse(`${service.origin}/v1/events`)))
  await Promise.all(streams.map(async (s) => await s.next((e) => e.id === String(head))))
  const startedAt = Date.now()
  service.drain.signal('SIGTERM')
  const announced = await openSse(`${service.origin}/v1/events`)
  t.equal(announced.status, 200, 'a stream asked for during the announce is served')
  service.sim.clock.advance()
  await Promise.all([...streams, announced].map(async (s) => await s.next((e) => e.id === String(head + 1))))
  const outcome = await service.drain.outcome
  t.equal(outcome.code, 0)
  const tookMs = Date.now() - startedAt
  t.ok(tookMs < 300 + 5000 + 1000, `every stream ended within the spread (${tookMs} ms)`)
  await Promise.all(streams.map(async (s) => await s.endedWithin('each stream ended by the drain')))
  const retries = streams.map((s) => s.events.at(-1)?.retry as number)
  t.ok(retries.every((r) => r >= 1000 && r <= 5000), `each ended with a retry: of 1-5 s (${retries.join(', ')})`)
  t.ok(new Set(retries).size > 1, 'randomised')
})
