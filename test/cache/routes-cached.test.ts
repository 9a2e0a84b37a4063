import t from 'tap'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'
import { ROUTE_CLASSES } from '../../src/cache/route-classes.js'
import { buildTestApp } from '../fixtures/app.js'
import { BlockClock } from '../../harness/chain-simulator/block-clock.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { matches, ROUTES } from '../../harness/routes.js'

// Every route with the answer cache at its default (on), against the same route with it off
// (as every other route test runs, harness/cache-off.ts): the same answers, a second
// read from the cache, and readiness as before.

// An empty value is the default, as loadConfig reads the environment.
const AT_DEFAULT = { EDGE_API_CACHE_SIZE: '' }
const OPTIONAL = { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' }
// Their bodies carry the request time (/v1/versions) or the time the answer was built (/v1/models' created).
const TIMED = new Set(['/v1/versions', '/v1/models'])

/** The chain reads of the simulator's requests, the head poll left out. */
const reads = (requests: readonly string[]): number => requests.filter((r) => !r.startsWith(LATEST_BLOCK_PATH)).length

/** An answer other than a 503: the verify route's workers may still be starting on a busy machine (a few tries, 100 ms apart). */
async function settled<T extends { statusCode: number }> (inject: () => Promise<T>): Promise<T> {
  let res = await inject()
  for (let tries = 1; res.statusCode === 503 && tries < 20; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    res = await inject()
  }
  return res
}

t.test('every GET route answers the same with the cache at its default as with it off; a second latest or fixed read is a hit with 0 chain reads', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const { app: off } = await buildTestApp(t, { sim, env: OPTIONAL })
  const { app: on, config } = await buildTestApp(t, { sim, env: { ...OPTIONAL, ...AT_DEFAULT } })
  t.equal(config.cacheBytes, 64 * 1024 * 1024, 'on by default: 64MiB')
  for (const route of ROUTES.filter((r) => r.method === 'GET' && r.example !== undefined)) {
    const url = route.example as string
    const want = await settled(() => off.inject(url))
    const first = await settled(() => on.inject(url))
    t.equal(first.statusCode, want.statusCode, `${url}: the same status`)
    if (!TIMED.has(route.path)) t.equal(first.body, want.body, `${url}: the same body`)
    const entry = Object.entries(ROUTE_CLASSES).find(([key]) => matches(key.slice('GET '.length).replace(/:(\w+)/g, '{$1}'), url))
    if (entry?.[1].class !== 'latest' && entry?.[1].class !== 'fixed') continue
    sim.resetCounts()
    const second = await on.inject(url)
    t.equal(second.statusCode, 200, url)
    t.equal(second.headers['x-cache'], 'hit', `${url}: from the cache`)
    t.equal(second.body, first.body, `${url}: the same answer`)
    t.equal(second.headers['content-type'], first.headers['content-type'], `${url}: the same content type`)
    t.equal(reads(sim.requests), 0, `${url}: 0 chain reads`)
  }
})

t.test('the cache adds no readiness dependency: /readyz answers as before while the head poll fails', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const { app } = await buildTestApp(t, { sim, env: AT_DEFAULT })
  sim.fail(LATEST_BLOCK_PATH, 2, 'internal error')
  const ready = await app.inject('/readyz')
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ready' })
  t.equal(sim.count(LATEST_BLOCK_PATH), 0, 'readiness never asks for the head')
})

t.test('an error is never cached nor tagged, by us or downstream: no-store, no ETag, its height said; the next read is no hit', async (t) => {
  const { app } = await buildTestApp(t, { env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m' } })
  for (const url of ['/v1/participants/gonka1unknown', '/v1/participants/gonka1unknown']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 404)
    t.equal(res.headers['cache-control'], 'no-store', 'no cache downstream keeps it')
    t.equal(res.headers.etag, undefined, 'nothing to revalidate')
    t.match(res.headers['x-block-height'], /^\d+$/, 'the height the chain said it at')
    t.equal(res.headers['x-cache'], 'miss', 'asked again: never a hit')
  }
})

t.test('an error without the cache, its height known only once read (no fresh head), still says it; a fixed route\'s error says none', async (t) => {
  const { app } = await buildTestApp(t, { env: { EDGE_API_HEAD_MAX_AGE: '1ms', EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' } })
  const latest = await app.inject('/v1/poc-batches/1')
  t.equal(latest.statusCode, 404)
  t.equal(latest.headers['cache-control'], 'no-store')
  t.match(latest.headers['x-block-height'], /^\d+$/)
  const fixed = await app.inject('/v1/debug/verify/999999999')
  t.ok(fixed.statusCode >= 400, `a height the chain has not reached: ${fixed.statusCode}`)
  t.equal(fixed.headers['cache-control'], 'no-store')
  t.equal(fixed.headers['x-block-height'], undefined, 'a fixed answer is at no head')
})

t.test('a bad input a route checks itself (epoch 0) is refused before any chain read, the cache on', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m' } })
  sim.resetCounts()
  const res = await app.inject('/v1/epochs/0/participants')
  t.equal(res.statusCode, 400)
  t.same(sim.requests, [], 'not even the head')
})

t.test('without the cache and with no fresh head, a revalidation with the current tag is a 304 once the answer is built', async (t) => {
  const { app } = await buildTestApp(t, { env: { EDGE_API_HEAD_MAX_AGE: '1ms' } })
  const first = await app.inject('/v1/restrictions/status')
  t.equal(first.statusCode, 200)
  await new Promise((resolve) => setTimeout(resolve, 5)) // the head is no longer fresh: the height is known only once read
  const again = await app.inject({ url: '/v1/restrictions/status', headers: { 'if-none-match': first.headers.etag as string } })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
  t.equal(again.headers['x-cache'], 'revalidated', 'said as the cache does')
})

t.test('a tag from another replica (same route and height) revalidates on one that has not built the answer: a 304, no chain read', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const env = { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m' }
  const { app: a } = await buildTestApp(t, { sim, env })
  const { app: b } = await buildTestApp(t, { sim, env })
  await b.inject('/v1/participants') // B knows the head
  const built = await a.inject('/v1/restrictions/status')
  sim.resetCounts()
  const again = await b.inject({ url: '/v1/restrictions/status', headers: { 'if-none-match': built.headers.etag as string } })
  t.equal(again.statusCode, 304)
  t.equal(again.headers.etag, built.headers.etag)
  t.equal(reads(sim.requests), 0, 'B asked the chain nothing')
})

t.test('a latest-state answer read unpinned (no node tells its height) is tagged by its body: after the chain moves, the old tag gets the new answer', async (t) => {
  const clock = new BlockClock()
  const sim = await startChainSimulator(0, { clock })
  t.teardown(() => sim.close())
  sim.override(LATEST_BLOCK_PATH, { block: { header: {} } })
  sim.tellsHeight = false
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1s' } })
  const first = await app.inject('/v1/epochs/latest')
  t.equal(first.headers['x-block-height'], undefined, 'unpinned')
  clock.advance()
  const again = await app.inject({ url: '/v1/epochs/latest', headers: { 'if-none-match': first.headers.etag as string } })
  t.equal(again.statusCode, 200, 'a new answer, not a 304 of the old one')
  t.not(again.body, first.body)
  t.not(again.headers.etag, first.headers.etag)
})
