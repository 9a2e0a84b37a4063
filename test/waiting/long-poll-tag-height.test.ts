import t from 'tap'
import { BlockClock } from '../../harness/chain-simulator/block-clock.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { heldTagHeight } from '../../src/cache/conditional.js'
import { buildTestApp } from '../fixtures/app.js'

// A long-poll by tag (If-None-Match + Prefer: wait) on a replica a block behind the replica
// that gave the tag: the tag names its height, so it waits for a block above it instead of
// answering its older block at once (at 1365d2e: 200 at the older height in 70 ms).

const ROUTE = '/v1/epochs/latest'
const CACHE_ON = { EDGE_API_CACHE_SIZE: '64MiB' }

t.test('a replica a block behind the tag waits for a block above the tag\'s height; 304 if none comes', async (t) => {
  const clock = new BlockClock()
  const ahead = await startChainSimulator(0, { clock })
  const behind = await startChainSimulator(0, { clock, lag: 1 })
  t.teardown(async () => { await ahead.close(); await behind.close() })
  const a = (await buildTestApp(t, { sim: ahead, env: CACHE_ON })).app
  const b = (await buildTestApp(t, { sim: behind, env: CACHE_ON })).app
  const origins = [await a.listen({ port: 0, host: '127.0.0.1' }), await b.listen({ port: 0, host: '127.0.0.1' })] as const
  const head = clock.height
  const first = await fetch(`${origins[0]}${ROUTE}`)
  t.equal(first.headers.get('x-block-height'), String(head))
  const etag = first.headers.get('etag') as string
  t.equal(heldTagHeight(etag), head, 'the tag names its height')
  const startedAt = Date.now()
  const waiting = fetch(`${origins[1]}${ROUTE}`, { headers: { 'if-none-match': etag, prefer: 'wait=20' } })
  let settled = false
  waiting.then(() => { settled = true }, () => {})
  await new Promise((resolve) => setTimeout(resolve, 500))
  t.notOk(settled, 'held: the replica behind has no answer newer than the client\'s')
  clock.advance()
  await new Promise((resolve) => setTimeout(resolve, 500))
  t.notOk(settled, 'still held when the replica reaches the tag\'s own height')
  clock.advance()
  const answer = await waiting
  t.equal(answer.status, 200)
  t.equal(answer.headers.get('x-block-height'), String(head + 1), 'answered at the first block above the tag\'s')
  t.ok(Date.now() - startedAt >= 1000, 'after waiting for it')
  const noneCame = await fetch(`${origins[1]}${ROUTE}`, { headers: { 'if-none-match': `"${head + 5}-AAAAAAAAAAAAAAAA"`, prefer: 'wait=1' } })
  t.equal(noneCame.status, 304, 'no block above the tag\'s within the wait: 304, never the older answer')
  const older = await fetch(`${origins[1]}${ROUTE}`, { headers: { 'if-none-match': `"${head - 5}-AAAAAAAAAAAAAAAA"`, prefer: 'wait=20' } })
  t.equal(older.status, 200, 'a tag of an older block: the newer answer at once')
})

t.test('heldTagHeight: the highest height any listed tag names, weak or not', async (t) => {
  t.equal(heldTagHeight(undefined), undefined)
  t.equal(heldTagHeight('"AAAAAAAAAAAAAAAA", *'), undefined, 'tags of no height')
  t.equal(heldTagHeight('"7-AAAAAAAAAAAAAAAA", W/"9-BBBBBBBBBBBBBBBB" ,"8-CCCCCCCCCCCCCCCC"'), 9)
  t.equal(heldTagHeight('"7-short"'), undefined, 'not one of ours')
})
