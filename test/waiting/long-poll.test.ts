import t from 'tap'
import { buildTestApp } from '../fixtures/app.js'
import { startListeningApp } from '../fixtures/listening-app.js'
import { getOnOwnConnection as get } from '../fixtures/own-connection-get.js'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'

// Long-poll on the latest-state routes (src/waiting/long-poll.ts), through the app as deployed
// (the answer cache on), over the chain simulator whose blocks the test lands by hand.

const CACHE_ON = { EDGE_API_CACHE_SIZE: '64MiB' }
const ROUTE = '/v1/epochs/latest'

t.test('bad cursors and waits are 400s that say what is allowed, before any chain request', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: CACHE_ON })
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['?afterHeight=abc', {}, /afterHeight must be a block height: a whole number from 0 to/],
    ['?afterHeight=-1', {}, /afterHeight must be a block height/],
    ['?afterHeight=1&wait=-1', {}, /wait must be whole seconds from 0 to 30 \(default 25\)/],
    ['?afterHeight=1&wait=31', {}, /wait must be whole seconds from 0 to 30/],
    ['?afterHeight=1&wait=1.5', {}, /wait must be whole seconds/],
    ['?afterHeight=1&afterHeight=2', {}, /afterHeight must be a block height/],
    ['?wait=5', {}, /wait needs afterHeight=<height> \(or If-None-Match/],
    ['', { 'if-none-match': '"x"', prefer: 'wait=soon' }, /Prefer: wait must be whole seconds/]
  ]
  for (const [query, headers, message] of cases) {
    const before = sim.requests.length
    const res = await app.inject({ url: ROUTE + query, headers })
    t.equal(res.statusCode, 400, query)
    t.match(res.json().message, message, query)
    t.equal(sim.requests.length, before, `${query}: no chain request`)
  }
})

t.test('afterHeight below the head answers at once; at the head it waits for the next block', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: CACHE_ON })
  const head = sim.clock.height
  const below = await app.inject({ url: `${ROUTE}?afterHeight=${head - 1}&wait=30` })
  t.equal(below.statusCode, 200)
  t.equal(below.headers['x-block-height'], String(head))
  const startedAt = Date.now()
  const waiting = app.inject({ url: `${ROUTE}?afterHeight=${head}&wait=30` })
  await new Promise((resolve) => setTimeout(resolve, 300))
  sim.clock.advance()
  const res = await waiting
  t.equal(res.statusCode, 200)
  t.equal(res.headers['x-block-height'], String(head + 1), 'answered at the new head')
  t.ok(Date.now() - startedAt < 5000, 'well before its wait')
})

t.test('afterHeight alone waits the default; a Prefer without wait is no long-poll; with no head known the wait is to its end', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: CACHE_ON })
  const head = sim.clock.height
  const below = await app.inject({ url: `${ROUTE}?afterHeight=${head - 1}` })
  t.equal(below.statusCode, 200, 'below the head: at once, whatever the default wait')
  const other = await app.inject({ url: ROUTE, headers: { 'if-none-match': below.headers.etag as string, prefer: 'respond-async' } })
  t.equal(other.statusCode, 304, 'a Prefer that asks no wait: an ordinary conditional read')
  t.equal(other.headers['preference-applied'], undefined)
  const queried = await app.inject({ url: '/v1/bridge/addresses?chain=ethereum', headers: { 'if-none-match': '"not its tag"', prefer: 'wait=0' } })
  t.equal(queried.statusCode, 200, 'a route with query parameters: its tag names them, so another tag is answered at once')

  const { app: blind, sim: blindSim } = await buildTestApp(t, { env: CACHE_ON })
  blindSim.raw(LATEST_BLOCK_PATH, 404, '<html><body><h1>404 Not Found</h1>nginx</body></html>')
  const startedAt = Date.now()
  const res = await blind.inject({ url: `${ROUTE}?afterHeight=${blindSim.clock.height + 5}&wait=1` })
  t.equal(res.statusCode, 200, 'no head known: held to the end of its wait, then the current answer')
  t.ok(Date.now() - startedAt >= 900, `held its wait (${Date.now() - startedAt} ms)`)
})

t.test('the wait ends with the current answer, or a 304 for If-None-Match + Prefer: wait', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: CACHE_ON })
  const head = sim.clock.height
  const plain = await app.inject({ url: `${ROUTE}?afterHeight=${head}&wait=1` })
  t.equal(plain.statusCode, 200)
  t.equal(plain.headers['x-block-height'], String(head))
  const etag = plain.headers.etag as string
  const startedAt = Date.now()
  const conditional = await app.inject({ url: ROUTE, headers: { 'if-none-match': etag, prefer: 'wait=1' } })
  t.equal(conditional.statusCode, 304)
  t.equal(conditional.headers['preference-applied'], 'wait=1')
  t.ok(Date.now() - startedAt >= 1000, 'held its wait')
  const zero = await app.inject({ url: ROUTE, headers: { 'if-none-match': etag, prefer: 'wait=0' } })
  t.equal(zero.statusCode, 304, 'wait=0: no wait')
  const clamped = app.inject({ url: ROUTE, headers: { 'if-none-match': etag, prefer: 'respond-async, wait=600' } })
  await new Promise((resolve) => setTimeout(resolve, 200))
  sim.clock.advance()
  const changed = await clamped
  t.equal(changed.statusCode, 200, 'a new block: a new ETag')
  t.equal(changed.headers['preference-applied'], 'wait=30', 'a longer wait is shortened to the most allowed')
  t.not(changed.headers.etag, etag)
  const other = await app.inject({ url: ROUTE, headers: { 'if-none-match': '"another"', prefer: 'wait=30' } })
  t.equal(other.statusCode, 200, 'a tag that is not the current one answers at once')
})

t.test('over the cap per client, or per replica, a 429 with Retry-After', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: { ...CACHE_ON, EDGE_API_WAITING_PER_CLIENT: '2', EDGE_API_WAITING_MAX: '3' } })
  const head = sim.clock.height
  const url = `${ROUTE}?afterHeight=${head}&wait=30`
  const held = [app.inject({ url }), app.inject({ url })]
  await new Promise((resolve) => setTimeout(resolve, 300))
  const third = await app.inject({ url })
  t.equal(third.statusCode, 429)
  t.equal(third.headers['retry-after'], '5')
  t.match(third.json().message, /this client is at its limit/)
  held.push(app.inject({ url, remoteAddress: '127.0.0.2' }))
  await new Promise((resolve) => setTimeout(resolve, 300))
  const fourth = await app.inject({ url, remoteAddress: '127.0.0.3' })
  t.equal(fourth.statusCode, 429)
  t.match(fourth.json().message, /this replica is at its limit/)
  sim.clock.advance()
  for (const res of await Promise.all(held)) t.equal(res.headers['x-block-height'], String(head + 1))
  const after = await app.inject({ url: `${ROUTE}?afterHeight=${head}&wait=0` })
  t.equal(after.statusCode, 200, 'places are given back')
})

t.test('a route that is not latest-state takes no long-poll', async (t) => {
  const { app } = await buildTestApp(t, { env: CACHE_ON })
  const res = await app.inject({ url: '/v1/status?afterHeight=abc' })
  t.equal(res.statusCode, 200)
  const plain = await app.inject({ url: ROUTE })
  t.equal(plain.statusCode, 200, 'a latest-state read without a cursor is an ordinary read')
})

t.test('the drain: held through the announce, then every held long-poll answered at once with Connection: close', async (t) => {
  const service = await startListeningApp(t, { announceMs: 400, budgetMs: 10_000 })
  const head = service.sim.clock.height
  const url = `${service.origin}${ROUTE}?afterHeight=${head}&wait=30`
  const held = Array.from({ length: 20 }, async () => await get(url))
  await new Promise((resolve) => setTimeout(resolve, 200))
  const startedAt = Date.now()
  service.drain.signal('SIGTERM')
  const announced = get(url)
  const outcome = await service.drain.outcome
  const answers = await Promise.all([...held, announced])
  t.equal(outcome.code, 0, 'a clean drain')
  t.ok(Date.now() - startedAt >= 400, 'not before the announce ended')
  t.ok(Date.now() - startedAt < 5000, `answered when the listener closed (${Date.now() - startedAt} ms), not at the end of their wait`)
  for (const res of answers) {
    t.equal(res.status, 200)
    t.equal(res.headers['x-block-height'], String(head), 'the current answer')
    t.equal(res.headers.connection, 'close')
  }
})

// The test above cannot tell who said Connection: close: once the listener closes, Node adds it
// to every response itself. A held long-poll woken by a block during the announce, the listener
// still open, carries it only if the drain's latch says so (app.ts's onSend hook): its client
// then moves to another replica before this one stops accepting (issue 54).
t.test('the drain: a held long-poll woken by a block during the announce (the listener still open) is answered with Connection: close', async (t) => {
  const service = await startListeningApp(t, { announceMs: 3000, budgetMs: 10_000 })
  const head = service.sim.clock.height
  const url = `${service.origin}${ROUTE}?afterHeight=${head}&wait=30`
  // Keep-alive clients, as the router and browsers are (a connection of its own says close itself).
  const held = Array.from({ length: 5 }, async () => await get(url, { connection: 'keep-alive' }))
  await new Promise((resolve) => setTimeout(resolve, 200))
  service.drain.signal('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 100))
  service.sim.clock.advance()
  const answers = await Promise.all(held)
  for (const res of answers) {
    t.equal(res.status, 200)
    t.equal(res.headers['x-block-height'], String(head + 1), 'woken by the block, not by the listener\'s close')
    t.equal(res.headers.connection, 'close', 'told to move off by the drain\'s latch')
  }
  t.equal((await service.drain.outcome).code, 0, 'a clean drain')
})

t.test('a client that leaves gives its place back at once', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: { ...CACHE_ON, EDGE_API_WAITING_PER_CLIENT: '1', EDGE_API_WAITING_MAX: '1' } })
  const server = await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `${server}${ROUTE}?afterHeight=${sim.clock.height}&wait=30`
  const leaving = new AbortController()
  const left = fetch(url, { signal: leaving.signal }).catch(() => 'aborted')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal((await fetch(url)).status, 429, 'its place is taken')
  leaving.abort()
  t.equal(await left, 'aborted')
  await new Promise((resolve) => setTimeout(resolve, 200))
  const next = fetch(url)
  await new Promise((resolve) => setTimeout(resolve, 200))
  sim.clock.advance()
  t.equal((await next).status, 200, 'and taken by the next')
})
