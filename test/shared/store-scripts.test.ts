import t from 'tap'
import { redisFor } from '../fixtures/redis.js'
import { until } from '../../harness/wait.js'
import { SharedStore, type StoreObserver } from '../../src/shared/store.js'

// The store's Lua scripts (the rate limit's GCRA) against a real redis-server: sent whole once,
// then asked by their SHA1, and sent again to a store that forgot them.

const WHY = 'the shared store\'s scripts'

t.test('a script is sent whole once, then asked by its SHA1 (EVALSHA); a store that forgot it (SCRIPT FLUSH) gets it again, no count lost', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const operations: string[] = []
  const seen = { sharedOperation: (operation: string, result: string) => { operations.push(`${operation} ${result}`) }, sharedStoreState: () => {}, sharedSubscriptionState: () => {} } as unknown as StoreObserver
  const store = await SharedStore.open({ url: redis.url, log: { info () {}, warn () {} }, observer: seen, commandTimeoutMs: 1000 })
  t.teardown(() => store.close())
  await until(() => store.state === 'up', 'the store up')
  const admin = await redis.admin()
  /** Calls of EVAL and EVALSHA so far, from the store's own statistics. */
  const calls = async (): Promise<{ eval: number, evalsha: number }> => {
    const stats = await admin.info('commandstats')
    const count = (name: string): number => Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0)
    return { eval: count('eval'), evalsha: count('evalsha') }
  }
  const script = 'return redis.call("INCR", KEYS[1])'
  for (let i = 1; i <= 5; i++) t.equal(await store.evaluate('count', script, ['n'], []), i)
  t.same(await calls(), { eval: 1, evalsha: 5 }, 'five counts: the script sent once (the first EVALSHA: NOSCRIPT), then only its SHA1')
  await admin.scriptFlush()
  t.equal(await store.evaluate('count', script, ['n'], []), 6, 'the store forgot it: answered all the same')
  t.same(await calls(), { eval: 2, evalsha: 6 }, 'sent whole once more')
  const failing = 'return redis.call("NOPE")'
  t.equal(await store.evaluate('count', failing, ['n'], []), undefined, 'a script the store refuses: no answer, nothing thrown')
  t.equal(await store.evaluate('count', failing, ['n'], []), undefined, 'by its SHA1 too')
  t.equal(operations.filter((op) => op === 'count error').length, 2)
  t.equal(operations.filter((op) => op === 'count ok').length, 6)
})
