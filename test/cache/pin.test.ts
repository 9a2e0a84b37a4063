import t from 'tap'
import { buildTestApp } from '../fixtures/app.js'
import { startChainNodes as nodes } from '../fixtures/chain.js'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'
import { MIN_HEIGHT_HEADER } from '../../src/cache/min-height.js'

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
