import t from 'tap'
import { buildTestApp } from '../fixtures/app.js'
import { until } from '../../harness/wait.js'
import { within } from '../../harness/deadline.js'
import { ManualClock } from '../fixtures/manual-clock.js'
import { startChainNodes as nodes } from '../fixtures/chain.js'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'
import { MIN_HEIGHT_ABSURD_FACTOR, MIN_HEIGHT_AHEAD_BLOCKS, MIN_HEIGHT_HEADER, MIN_HEIGHT_MAX_WAITERS, MIN_HEIGHT_WAIT_MS, minimumHeight } from '../../src/cache/min-height.js'

// The client-echoed minimum height (docs/heights-and-cache.md §7), in process: every path of
// src/cache/min-height.ts. test/e2e/min-height.test.ts runs it over sockets on dist/main.js.

const EPOCH_INFO = '/productscience/inference/inference/epoch_info'

// Spelled as the README tells clients to send it, not by the module's constant.
const withMin = (minimum: number | string, headers: Record<string, string> = {}): { headers: Record<string, string> } =>
  ({ headers: { 'X-Min-Block-Height': String(minimum), ...headers } })

/**
 * A read whose minimum no node reaches, its wait run out on the chain client's manual clock:
 * once the read waits and its first poll has ended (two timers that keep the process alive on
 * the clock: the wait's and the poll's spacing; a hanging node's poll ends at its own budget,
 * on the real clock), the clock is moved MIN_HEIGHT_WAIT_MS on, firing the spacing on the way,
 * instead of 2 s of the machine's time per read (issue 54). A read the first poll ended is
 * returned as it is.
 */
async function waitedOut<T> (time: ManualClock, read: Promise<T>): Promise<T> {
  let ended = false
  read.then(() => { ended = true }, () => { ended = true })
  await until(() => ended || time.keepingAlive >= 2, 'the read to wait for its minimum and its first poll to end')
  if (!ended) await time.advance(MIN_HEIGHT_WAIT_MS)
  return await within(read, 'the read to end when its wait ran out')
}

t.test('the header is one block height: anything else is a 400 that says what is wrong', async (t) => {
  t.equal(minimumHeight({}), undefined, 'absent: no minimum')
  t.equal(minimumHeight({ [MIN_HEIGHT_HEADER]: '1843211' }), 1843211)
  t.equal(minimumHeight({ [MIN_HEIGHT_HEADER]: '9007199254740991' }), 9007199254740991, '16 digits up to 2^53 - 1')
  for (const value of ['', 'abc', '0', '-5', '+5', '05', '1.5', '1e6', '0x10', '12345678901234567', '9007199254740992', '9999999999999999']) {
    t.throws(() => minimumHeight({ [MIN_HEIGHT_HEADER]: value }), { statusCode: 400, message: /^X-Min-Block-Height must be a block height: a positive integer of at most 16 digits/ }, JSON.stringify(value))
  }
  // Node joins a repeated header with ", ".
  t.throws(() => minimumHeight({ [MIN_HEIGHT_HEADER]: '5, 6' }), { statusCode: 400, message: 'X-Min-Block-Height must be sent once, with one block height' })
})

for (const cache of ['0', '1MiB']) {
  t.test(`a malformed minimum is a 400 before any chain request, head polls included (EDGE_API_CACHE_SIZE=${cache})`, async (t) => {
    const { sims: [sim] } = await nodes(t, [0])
    const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: cache } })
    for (const value of ['abc', '0', '12345678901234567']) {
      const res = await app.inject({ url: '/v1/epochs/latest', ...withMin(value) })
      t.equal(res.statusCode, 400, value)
      t.match(res.json().message, /^X-Min-Block-Height must be a block height/)
      t.equal(res.headers.vary, MIN_HEIGHT_HEADER, 'its errors vary by it too')
    }
    const twice = await app.inject({ url: '/v1/participants', headers: { [MIN_HEIGHT_HEADER]: ['5', '6'] } })
    t.equal(twice.statusCode, 400)
    t.same(sim!.requests, [], '0 chain requests')
  })

  t.test(`a minimum at or below the served height answers at once, at the served height (EDGE_API_CACHE_SIZE=${cache})`, async (t) => {
    const { sims: [sim] } = await nodes(t, [0])
    const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: cache, EDGE_API_HEAD_MAX_AGE: '1m' } })
    const first = await app.inject('/v1/epochs/latest')
    const height = Number(first.headers['x-block-height'])
    t.equal(first.headers.vary, MIN_HEIGHT_HEADER, 'latest-state answers vary by the header')
    sim!.resetCounts()
    for (const minimum of [1, height - 1, height]) {
      const res = await app.inject({ url: '/v1/epochs/latest', ...withMin(minimum) })
      t.equal(res.statusCode, 200)
      t.equal(Number(res.headers['x-block-height']), height, `minimum ${minimum}`)
      t.equal(res.headers.vary, MIN_HEIGHT_HEADER)
    }
    t.equal(sim!.count(LATEST_BLOCK_PATH), 0, 'no head poll: the served head is fresh and at the minimum, exactly at it included')
  })

  t.test(`a node that reaches the minimum within the wait: 200 at it; one that does not: 503 with Retry-After (EDGE_API_CACHE_SIZE=${cache})`, async (t) => {
    const { clock, sims: [sim] } = await nodes(t, [0])
    const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: cache, EDGE_API_HEAD_MAX_AGE: '1m' } })
    const height = Number((await app.inject('/v1/epochs/latest')).headers['x-block-height'])
    sim!.resetCounts()
    setTimeout(() => clock.advance(), 400)
    const started = performance.now()
    const res = await app.inject({ url: '/v1/epochs/latest', ...withMin(height + 1) })
    const waited = performance.now() - started
    t.equal(res.statusCode, 200)
    t.equal(Number(res.headers['x-block-height']), height + 1, 'answered at the minimum')
    t.equal(res.json().block_height, height + 1)
    t.ok(waited >= 350 && waited < MIN_HEIGHT_WAIT_MS, `waited ${Math.round(waited)} ms for the node`)
    const polls = sim!.count(LATEST_BLOCK_PATH)
    t.ok(polls >= 2 && polls <= 12, `${polls} head polls while waiting, at most one per 100 ms`)
    t.same(sim!.askedHeights.filter((_h, i) => (sim!.requests[i] as string).startsWith(EPOCH_INFO)), [height + 1], 'the answer read at it')

    // A node that does not get there: the wait runs out on the chain client's (manual) clock.
    const time = new ManualClock()
    const { app: timed } = await buildTestApp(t, { sim, chain: { clock: time }, env: { EDGE_API_CACHE_SIZE: cache, EDGE_API_HEAD_MAX_AGE: '1m' } })
    const none = await waitedOut(time, timed.inject({ url: '/v1/epochs/latest', ...withMin(height + 3) }))
    t.equal(none.statusCode, 503)
    t.equal(none.headers['retry-after'], '1')
    t.same(none.json(), { message: `no chain node of this replica has reached block ${height + 3} (X-Min-Block-Height) within ${MIN_HEIGHT_WAIT_MS} ms; its highest is ${height + 1}; retry shortly` })
  })

  t.test(`a minimum beyond this replica's ceiling: 503 with Retry-After at once (it is behind); 400 only for a height absurd on any chain (EDGE_API_CACHE_SIZE=${cache})`, async (t) => {
    const { clock, sims: [sim] } = await nodes(t, [0])
    const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: cache, EDGE_API_MAX_NODE_LAG: '2' } })
    const head = sim!.head
    const ceiling = head + 2 + MIN_HEIGHT_AHEAD_BLOCKS
    const started = performance.now()
    const behind = await app.inject({ url: '/v1/epochs/latest', ...withMin(ceiling + 1) })
    t.equal(behind.statusCode, 503, 'another replica, or this one later, may have it')
    t.equal(behind.headers['retry-after'], '1')
    t.same(behind.json(), { message: `no chain node of this replica has reached block ${ceiling + 1} (X-Min-Block-Height) and it is ${ceiling + 1 - head} blocks behind it, more than its nodes catch up on within the wait; its highest is ${head}; retry shortly` })
    t.ok(performance.now() - started < MIN_HEIGHT_WAIT_MS, 'judged on the first poll, not at the end of the wait')
    t.equal((await app.inject({ url: '/v1/epochs/latest', ...withMin(ceiling * MIN_HEIGHT_ABSURD_FACTOR) })).statusCode, 503, 'up to 10 times the ceiling: still 503')
    const absurd = ceiling * MIN_HEIGHT_ABSURD_FACTOR + 1
    const res = await app.inject({ url: '/v1/epochs/latest', ...withMin(absurd) })
    t.equal(res.statusCode, 400)
    t.same(res.json(), { message: `X-Min-Block-Height ${absurd} is ${absurd - head} blocks above the highest head of this service's chain nodes (${head}), more than any replica can be behind; send the X-Block-Height of an earlier answer` })
    t.equal(sim!.count(EPOCH_INFO), 0, 'the answer was not read')
    const largest = await app.inject({ url: '/v1/epochs/latest', ...withMin('9007199254740991') })
    t.equal(largest.statusCode, 400)
    // The ceiling itself is within reach: the read waits, and the node gets there.
    setTimeout(() => clock.advance(ceiling - head), 300)
    const atCeiling = await app.inject({ url: '/v1/epochs/latest', ...withMin(ceiling) })
    t.equal(atCeiling.statusCode, 200, 'a minimum exactly at the ceiling waits for it')
    t.equal(Number(atCeiling.headers['x-block-height']), ceiling)
  })
}

t.test(`at most ${MIN_HEIGHT_MAX_WAITERS} reads wait for their minimum at once; the others answer 503 with Retry-After at once, never hang`, async (t) => {
  const { clock, sims: [sim] } = await nodes(t, [0])
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m' } })
  const height = Number((await app.inject('/v1/epochs/latest')).headers['x-block-height'])
  // The block comes only once the reads beyond the cap are answered: a read beyond it that waited would never be.
  let refusedSoFar = 0
  const all = Promise.all(Array.from({ length: MIN_HEIGHT_MAX_WAITERS + 40 }, async () => {
    const res = await app.inject({ url: '/v1/epochs/latest', ...withMin(height + 1) })
    if (res.statusCode === 503) refusedSoFar++
    return res
  }))
  await until(() => refusedSoFar === 40, 'the reads beyond the cap to be refused', { timeoutMs: MIN_HEIGHT_WAIT_MS })
  clock.advance()
  const answers = await all
  const served = answers.filter((res) => res.statusCode === 200)
  const refused = answers.filter((res) => res.statusCode === 503)
  t.equal(served.length, MIN_HEIGHT_MAX_WAITERS, 'those within the cap waited for the block')
  t.same([...new Set(served.map((res) => Number(res.headers['x-block-height'])))], [height + 1])
  t.equal(refused.length, 40)
  t.same([...new Set(refused.map((res) => res.headers['retry-after']))], ['1'])
  t.match(refused[0]?.json().message, new RegExp(`^no chain node of this replica has reached block ${height + 1} \\(X-Min-Block-Height\\) and ${MIN_HEIGHT_MAX_WAITERS} reads wait for their minimum already`))
})

t.test('with the cache, a hit or a 304 below the minimum is not served: the answer is read again at it', async (t) => {
  const { clock, sims: [sim] } = await nodes(t, [0])
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m' } })
  // On a loaded machine the first head poll can outlast the first read, which is then served
  // unpinned (issue 33) and not cached: read until an answer names its height.
  let first = await app.inject('/v1/epochs/latest')
  for (let i = 0; i < 20 && first.headers['x-block-height'] === undefined; i++) first = await app.inject('/v1/epochs/latest')
  const height = Number(first.headers['x-block-height'])
  const hit = await app.inject('/v1/epochs/latest')
  t.equal(hit.headers['x-cache'], 'hit', 'the answer is cached at its height, whose head stays fresh for a minute')
  clock.advance()
  const again = await app.inject('/v1/epochs/latest')
  t.equal(again.headers['x-cache'], 'hit', 'without the header: still the hit at the old head')
  t.equal(Number(again.headers['x-block-height']), height)

  const raised = await app.inject({ url: '/v1/epochs/latest', ...withMin(height + 1) })
  t.equal(raised.statusCode, 200)
  t.equal(raised.headers['x-cache'], 'miss', 'the hit below the minimum was not served')
  t.equal(Number(raised.headers['x-block-height']), height + 1)

  clock.advance()
  const revalidated = await app.inject({ url: '/v1/epochs/latest', ...withMin(height + 2, { 'if-none-match': String(raised.headers.etag) }) })
  t.equal(revalidated.statusCode, 200, 'If-None-Match with the tag of a height below the minimum: read again, not 304')
  t.equal(Number(revalidated.headers['x-block-height']), height + 2)
  const current = await app.inject({ url: '/v1/epochs/latest', ...withMin(height + 2, { 'if-none-match': String(revalidated.headers.etag) }) })
  t.equal(current.statusCode, 304, 'the tag of the minimum itself: 304')
  t.equal(current.headers.vary, MIN_HEIGHT_HEADER)
})

t.test('one node, no cache (the first-answer pin): the minimum holds, and so does a revalidation', async (t) => {
  const { clock, sims: [sim] } = await nodes(t, [0])
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '0', EDGE_API_HEAD_MAX_AGE: '1m' } })
  const first = await app.inject('/v1/epochs/latest')
  const height = Number(first.headers['x-block-height'])
  clock.advance()
  sim!.resetCounts()
  const res = await app.inject({ url: '/v1/epochs/latest', ...withMin(height + 1, { 'if-none-match': String(first.headers.etag) }) })
  t.equal(res.statusCode, 200, 'not the 304 of the height below')
  t.equal(Number(res.headers['x-block-height']), height + 1)
  t.ok(sim!.count(LATEST_BLOCK_PATH) >= 1, 'its head asked for: the height is known before the read')
  t.same(sim!.askedHeights.filter((_h, i) => (sim!.requests[i] as string).startsWith(EPOCH_INFO)), [height + 1], 'the read pinned to it')
})

t.test('two nodes, one lagging: the read waits for a head at the minimum and is served by the node that has it', async (t) => {
  const { clock, sims: [behind, ahead] } = await nodes(t, [3, 0])
  const { app } = await buildTestApp(t, { sim: behind, env: { CHAIN_REST_URL: `${behind!.url},${ahead!.url}`, EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m' } })
  const height = Number((await app.inject('/v1/epochs/latest')).headers['x-block-height'])
  t.equal(height, ahead!.head)
  clock.advance(2)
  const res = await app.inject({ url: '/v1/epochs/latest', ...withMin(height + 2) })
  t.equal(res.statusCode, 200)
  t.equal(Number(res.headers['x-block-height']), height + 2)
  t.equal(behind!.count(EPOCH_INFO), 0, 'the lagging node read nothing')
})

t.test('concurrent reads waiting for one minimum share the head polls', async (t) => {
  const { clock, sims: [sim] } = await nodes(t, [0])
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m' } })
  const height = Number((await app.inject('/v1/epochs/latest')).headers['x-block-height'])
  sim!.resetCounts()
  setTimeout(() => clock.advance(), 500)
  // They come one after another, 10 ms apart, while the first ones wait: each joins the one poll loop.
  const answers = await Promise.all(Array.from({ length: 40 }, async (_r, i) => {
    await new Promise((resolve) => setTimeout(resolve, i * 10))
    return app.inject({ url: '/v1/epochs/latest', ...withMin(height + 1) })
  }))
  t.same([...new Set(answers.map((r) => r.statusCode))], [200])
  t.same([...new Set(answers.map((r) => Number(r.headers['x-block-height'])))], [height + 1])
  const polls = sim!.count(LATEST_BLOCK_PATH)
  t.ok(polls <= 10, `40 waiting reads, ${polls} head polls in ~500 ms`)
  t.equal(sim!.count(EPOCH_INFO), 1, 'and one chain read for the answer')
  // Once every read is answered the loop ends (after its last 100 ms pause); the next read that waits starts it again.
  await new Promise((resolve) => setTimeout(resolve, 300))
  setTimeout(() => clock.advance(), 300)
  const later = await app.inject({ url: '/v1/epochs/latest', ...withMin(height + 2) })
  t.equal(later.statusCode, 200, 'a later wait polls again')
  t.equal(Number(later.headers['x-block-height']), height + 2)
})

t.test('a node slow to tell its head is asked again as soon as the spacing allows: a poll\'s own time counts in it', async (t) => {
  const { sims: [sim] } = await nodes(t, [0])
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m' } })
  const height = Number((await app.inject('/v1/epochs/latest')).headers['x-block-height'])
  sim!.latency(80, LATEST_BLOCK_PATH)
  sim!.resetCounts()
  const res = await app.inject({ url: '/v1/epochs/latest', ...withMin(height + 1) })
  t.equal(res.statusCode, 503)
  const polls = sim!.count(LATEST_BLOCK_PATH)
  // One per 100 ms (an 80 ms poll, then 20 ms): ~20 in the 2 s; a pause of a full spacing after each would make ~8.
  t.ok(polls >= 13 && polls <= 21, `${polls} head polls of 80 ms each in the ${MIN_HEIGHT_WAIT_MS} ms wait`)
})

t.test('nodes that tell no head while a read waits: 503 at the bound, never the 400 of a height judged on stale heads', async (t) => {
  const { sims: [sim] } = await nodes(t, [0])
  const time = new ManualClock()
  const { app } = await buildTestApp(t, { sim, chain: { clock: time }, env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m' } })
  const height = Number((await app.inject('/v1/epochs/latest')).headers['x-block-height'])
  sim!.hang(LATEST_BLOCK_PATH)
  // Absurd against the last head known: judged only on a head a node has just told.
  const far = await waitedOut(time, app.inject({ url: '/v1/epochs/latest', ...withMin((height + 2 + MIN_HEIGHT_AHEAD_BLOCKS) * MIN_HEIGHT_ABSURD_FACTOR + 1) }))
  t.equal(far.statusCode, 503, 'the heads are stale: 503, not the 400 of an absurd height')
  t.equal(far.headers['retry-after'], '1')
  sim!.clearFaults()
  await sim!.refuse()
  const refused = await waitedOut(time, app.inject({ url: '/v1/epochs/latest', ...withMin(height + 1000) }))
  t.equal(refused.statusCode, 503, 'a node that refuses: the same')
  await sim!.restore()
})

t.test('a node that tells no height (latest-state reads go unpinned): a minimum cannot be promised, 503; without it, 200', async (t) => {
  const { sims: [sim] } = await nodes(t, [0])
  const time = new ManualClock()
  const { app } = await buildTestApp(t, { sim, chain: { clock: time }, env: { EDGE_API_CACHE_SIZE: '1MiB' } })
  sim!.tellsHeight = false
  sim!.fail(LATEST_BLOCK_PATH, 12, 'Not Implemented', 501)
  t.equal((await app.inject('/v1/epochs/latest')).statusCode, 200, 'read unpinned, as the Go service read')
  const res = await waitedOut(time, app.inject({ url: '/v1/epochs/latest', ...withMin(5) }))
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '1')
  t.match(res.json().message, /^no chain node of this replica has reached block 5 \(X-Min-Block-Height\)/)
})

t.test('routes that are not latest-state ignore the header, malformed or not', async (t) => {
  const { sims: [sim] } = await nodes(t, [0])
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB' } })
  for (const url of ['/v1/status', '/v1/versions']) {
    const res = await app.inject({ url, ...withMin('not a height') })
    t.equal(res.statusCode, 200, url)
    t.equal(res.headers.vary, undefined, `${url}: no Vary`)
  }
})

t.test('/openapi.json documents the header on the latest-state routes only', async (t) => {
  const { app } = await buildTestApp(t)
  const doc = (await app.inject('/openapi.json')).json()
  const header = (path: string): unknown => (doc.paths[path].get.parameters as Array<{ in: string, name: string }> | undefined)?.find((p) => p.in === 'header' && p.name === MIN_HEIGHT_HEADER)
  for (const path of ['/v1/epochs/{epoch}', '/v1/participants', '/v1/bridge/addresses']) t.match(header(path), { required: false, schema: { type: 'string', pattern: '^[1-9]\\d{0,15}$' } }, path)
  for (const path of ['/v1/status', '/v1/versions', '/v1/debug/verify/{height}']) t.equal(header(path), undefined, path)
  t.equal(doc.paths['/healthz'].get.parameters, undefined, 'the probes are left alone')
})
