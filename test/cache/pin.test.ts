import t from 'tap'
import { buildTestApp } from '../fixtures/app.js'
import { startChainNodes as nodes } from '../fixtures/chain.js'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'
import { MIN_HEIGHT_HEADER } from '../../src/cache/min-height.js'
import { SIGNED_BASE } from '../../harness/chain-simulator/data/commits.js'

// Choosing the reader: every chain read of a latest-state answer at the one height it names.

for (const cache of ['0', '1MiB']) {
  t.test(`every chain read of a latest-state answer asks for the height the answer names (EDGE_API_CACHE_SIZE=${cache})`, async (t) => {
    const { clock, sims: [sim] } = await nodes(t, [0])
    const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: cache, EDGE_API_HEAD_MAX_AGE: '1m' } })
    await app.inject('/v1/epochs/latest') // the head is known
    clock.advance() // the node moves on: the answer stays at the head the replica serves
    sim!.resetCounts()
    const res = await app.inject('/v1/participants')
    t.equal(res.statusCode, 200)
    const height = Number(res.headers['x-block-height'])
    t.equal(res.headers['cache-control'], 'no-cache')
    t.equal(res.headers.vary, MIN_HEIGHT_HEADER)
    const reads = sim!.requests.map((_r, i) => i).filter((i) => !(sim!.requests[i] as string).startsWith(LATEST_BLOCK_PATH))
    t.ok(reads.length >= 2, `${reads.length} chain reads`)
    t.same(reads.map((i) => sim!.answeredHeights[i]), reads.map(() => height), `all answered at ${height}`)
    // Without the cache the first read is unpinned: the height it is answered at pins the rest.
    const asked = reads.map((i) => sim!.askedHeights[i]).slice(cache === '0' ? 1 : 0)
    t.same(asked, asked.map(() => height), `asked at ${height}`)
  })
}

t.test('a latest-state answer varies by the minimum height as well as by what varied it before (CORS with a list varies by Origin)', async (t) => {
  const { sims: [sim] } = await nodes(t, [0])
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CORS_ORIGINS: 'https://app.example.com', EDGE_API_HEAD_MAX_AGE: '1m' } })
  const res = await app.inject({ url: '/v1/participants', headers: { origin: 'https://app.example.com' } })
  t.equal(res.statusCode, 200)
  t.same(String(res.headers.vary).split(', ').sort(), [MIN_HEIGHT_HEADER, 'Origin'].sort())
})

t.test('a client\'s minimum height above the head the replica knows: the answer is read at that height or later', async (t) => {
  const { clock, sims: [sim] } = await nodes(t, [0])
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m' } })
  const first = await app.inject('/v1/participants')
  const known = Number(first.headers['x-block-height'])
  clock.advance() // a block the replica has not polled for (its head is fresh for a minute)
  const res = await app.inject({ url: '/v1/participants', headers: { [MIN_HEIGHT_HEADER]: String(known + 1) } })
  t.equal(res.statusCode, 200)
  t.ok(Number(res.headers['x-block-height']) >= known + 1, `read at ${String(res.headers['x-block-height'])}, asked for ${known + 1} or later`)
})

t.test('an answer fixed by its path is cacheable by anyone for a year, immutable', async (t) => {
  const { sims: [sim] } = await nodes(t, [0])
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' } })
  // The first verification starts the worker: on a busy machine it can pass its time limit (503).
  let verified = await app.inject(`/v1/debug/verify/${SIGNED_BASE + 2}`)
  for (let tries = 1; verified.statusCode === 503 && tries < 5; tries++) verified = await app.inject(`/v1/debug/verify/${SIGNED_BASE + 2}`)
  t.equal(verified.statusCode, 200)
  t.equal(verified.headers['cache-control'], 'public, max-age=31536000, immutable')
})

t.test('without the cache, one node: a latest-state answer costs the chain no head poll (its first read\'s height pins the rest)', async (t) => {
  const { sims: [sim] } = await nodes(t, [0])
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '0', EDGE_API_HEAD_MAX_AGE: '1m' } })
  sim!.resetCounts()
  const res = await app.inject('/v1/participants')
  t.equal(res.statusCode, 200)
  t.equal(sim!.count(LATEST_BLOCK_PATH), 0, 'no blocks/latest asked')
  t.ok(sim!.requests.length >= 2, `${sim!.requests.length} reads, all of the answer`)
  t.equal((await app.inject('/v1/epochs/current/participants')).statusCode, 200, 'an answer with reads a height fixes (block, validator set, proof): read from the chain, nothing to keep them in')
})

t.test('with the cache, the reads a height fixes are kept: the next block\'s answer asks the chain for no block nor validator set', async (t) => {
  const { clock, sims: [sim] } = await nodes(t, [0])
  const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1ms' } })
  t.equal((await app.inject('/v1/epochs/current/participants')).statusCode, 200)
  clock.advance()
  sim!.resetCounts()
  const next = await app.inject('/v1/epochs/current/participants')
  t.equal(next.statusCode, 200)
  t.equal(next.headers['x-cache'], 'miss', 'a new answer at the next block')
  t.same(sim!.requests.filter((r) => /\/(blocks\/[0-9]|validatorsets\/)/.test(r)), [], 'its block and validator set read from the cache')
})
