import t from 'tap'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'
import { ROUTE_CLASSES } from '../../src/cache/route-classes.js'
import { buildTestApp } from '../fixtures/app.js'
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
