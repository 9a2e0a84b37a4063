import t from 'tap'
import { buildTestApp } from '../fixtures/app.js'
import { ROUTE_CLASSES, routeClass } from '../../src/cache/route-classes.js'
import { COMPLETED_REQUEST_ID } from '../../harness/chain-simulator/data/bls.js'
import { SIGNED_BASE } from '../../harness/chain-simulator/data/commits.js'
import { POC_START } from '../../harness/chain-simulator/data/epochs.js'
import { ROUTES } from '../../harness/routes.js'

/** An answer other than a 503: the verify route's worker may still be starting on a busy machine. */
async function settled<T extends { statusCode: number }> (inject: () => Promise<T>): Promise<T> {
  let res = await inject()
  for (let tries = 1; res.statusCode === 503 && tries < 100; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    res = await inject()
  }
  return res
}

t.test('every /v1 route has a class and a reason, and every listed route exists', async (t) => {
  const { app } = await buildTestApp(t)
  for (const [route, entry] of Object.entries(ROUTE_CLASSES)) {
    const [method, url] = route.split(' ') as [string, string]
    t.ok(app.hasRoute({ method: method as 'GET', url }), `${route} is served`)
    t.ok(entry.why.length > 10, `${route}: says why`)
  }
  t.equal(routeClass('GET', '/v1/epochs/:epoch'), 'latest')
  t.equal(routeClass('GET', '/v1/debug/verify/:height'), 'fixed')
  t.equal(routeClass('GET', '/v1/nothing'), undefined)
})

// What a client sees of each class, listed here apart from ROUTE_CLASSES (the contract, not
// a copy of it): the caching headers, the height, and whether a second read is the cache's.
const IMMUTABLE = 'public, max-age=31536000, immutable'
const SEEN: Record<string, 'latest' | 'fixed' | 'pure' | 'local' | 'uncached'> = {
  '/v1/status': 'local',
  '/v1/debug/pubkey-to-addr/{pubkey}': 'pure',
  '/v1/versions': 'uncached',
  '/v1/debug/verify/{height}': 'fixed',
  '/v1/light/signed-header/{height}': 'fixed',
  '/v1/light/validators/{height}': 'fixed'
}

t.test('each GET route answers as its class says: no-cache with a height and a hit for latest state, immutable for fixed and pure answers', async (t) => {
  const { app } = await buildTestApp(t, { env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m', EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' } })
  for (const route of ROUTES.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/'))) {
    const seen = SEEN[route.path] ?? 'latest'
    const first = await settled(() => app.inject(route.example as string))
    const second = await app.inject(route.example as string)
    t.equal(second.statusCode, 200, route.path)
    t.equal(second.headers['cache-control'], seen === 'latest' || seen === 'local' || seen === 'uncached' ? 'no-cache' : IMMUTABLE, `${route.path}: ${seen}`)
    t.equal(second.headers['x-cache'], seen === 'latest' || seen === 'fixed' ? 'hit' : undefined, `${route.path}: cached or not`)
    t.equal(first.headers['x-block-height'] !== undefined, seen === 'latest', `${route.path}: the height of a latest-state answer`)
  }
})

t.test('the spellings of one number or of hex bytes in a path are one answer: the second spelling is a hit', async (t) => {
  const { app } = await buildTestApp(t, { env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m', EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' } })
  const spellings = [
    ['/v1/epochs/1/participants', '/v1/epochs/01/participants'],
    [`/v1/poc-batches/${POC_START}`, `/v1/poc-batches/0${POC_START}`],
    ['/v1/bls/epoch/7', '/v1/bls/epoch/07'],
    ['/v1/bls/epochs/7', '/v1/bls/epochs/007'],
    [`/v1/bls/signatures/${COMPLETED_REQUEST_ID}`, `/v1/bls/signatures/${COMPLETED_REQUEST_ID.toUpperCase()}`],
    [`/v1/debug/verify/${SIGNED_BASE + 2}`, `/v1/debug/verify/0${SIGNED_BASE + 2}`]
  ]
  for (const [first, other] of spellings as Array<[string, string]>) {
    const built = await settled(() => app.inject(first))
    t.equal(built.statusCode, 200, first)
    const again = await app.inject(other)
    t.equal(again.headers['x-cache'], 'hit', `${other}: ${first}'s answer`)
  }
})
