import t, { type Test } from 'tap'
import { ANSWER_PREFIX, MAX_SHARED_BYTES, SharedAnswers, type SharedLookup } from '../../src/shared/shared-answers.js'
import { SharedStore } from '../../src/shared/store.js'
import { redisFor, type RedisServer } from '../fixtures/redis-server.js'
import { until } from '../fixtures/wait.js'

const WHY = 'the shared answers\' tests'

// The pool's answers on a real redis-server: one replica claims a key and builds it, the
// others find its answer or wait a bounded time for it, then build their own.

const quiet = { info () {}, warn () {} }
const answer = (text: string) => ({ body: Buffer.from(text), contentType: 'application/json; charset=utf-8', etag: '"tag"' })

async function replica (t: Test, redis: RedisServer, waitMs?: number): Promise<{ answers: SharedAnswers, results: SharedLookup[], store: SharedStore }> {
  // A deadline a loaded test machine keeps: these tests are about what is shared, not about deadlines (store.test.ts).
  const store = await SharedStore.open({ url: redis.url, log: quiet, commandTimeoutMs: 1000 })
  t.teardown(() => store.close())
  await until(() => store.state === 'up', 'the store up')
  const results: SharedLookup[] = []
  return { answers: new SharedAnswers({ store, onLookup: (r) => results.push(r), waitMs }), results, store }
}

t.test('one replica claims and builds; another finds the same bytes, content type and ETag', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const a = await replica(t, redis)
  const b = await replica(t, redis)
  t.equal(await a.answers.find('/v1/epochs/latest {} @100'), undefined, 'A misses and holds the claim')
  a.answers.keep('/v1/epochs/latest {} @100', answer('{"é":1}'))
  await until(async () => (await (await redis.admin()).exists(ANSWER_PREFIX + '/v1/epochs/latest {} @100')) === 1, 'the answer stored')
  t.same(await b.answers.find('/v1/epochs/latest {} @100'), answer('{"é":1}'), 'B finds it, byte for byte')
  t.same([a.results, b.results], [['claimed'], ['hit']])
  const ttl = await (await redis.admin()).pTTL(ANSWER_PREFIX + '/v1/epochs/latest {} @100')
  t.ok(ttl > 50_000 && ttl <= 60_000, `kept with a TTL (${ttl} ms), never for ever`)
})

t.test('concurrent misses: the one that did not claim waits for the builder\'s answer, or gives up after its bound', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const a = await replica(t, redis)
  // B waits long enough for a loaded test machine's timers; C has the default's 60 ms.
  const b = await replica(t, redis, 1000)
  const c = await replica(t, redis, 60)
  t.equal(await a.answers.find('k@1'), undefined)
  const waiting = b.answers.find('k@1')
  setTimeout(() => { a.answers.keep('k@1', answer('built once')) }, 15)
  t.same(await waiting, answer('built once'), 'B waited for A\'s answer instead of asking the chain')
  t.same(b.results, ['waited'])

  t.equal(await a.answers.find('k@2'), undefined, 'A claims k@2 and never finishes')
  const started = performance.now()
  t.equal(await c.answers.find('k@2'), undefined, 'C builds its own')
  const waited = performance.now() - started
  t.ok(waited >= 55 && waited < 1000, `after its bound (${waited.toFixed(0)} ms, 60 ms)`)
  t.same(c.results, ['gave_up'])
})

t.test('a store that does not answer: a miss at once, the replica builds; oversized and foreign values are not shared', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const a = await replica(t, redis)
  a.answers.keep('big@1', answer('x'.repeat(MAX_SHARED_BYTES + 1)))
  const admin = await redis.admin()
  await admin.set(ANSWER_PREFIX + 'foreign@1', 'no newlines here')
  t.equal(await a.answers.find('foreign@1'), undefined, 'a value not of our shape is a miss')
  t.equal(await admin.exists(ANSWER_PREFIX + 'big@1'), 0, 'an answer over 1 MiB is not shared')
  await redis.kill()
  await until(() => a.store.state === 'down', 'the store down')
  const started = performance.now()
  t.equal(await a.answers.find('k@3'), undefined)
  t.ok(performance.now() - started < 50, 'at once (no deadline waited; 50 ms: a loaded machine)')
  t.same(a.results, ['claimed', 'unavailable'])
  const plain = new SharedAnswers({ store: a.store })
  t.equal(await plain.find('k@3'), undefined, 'without onLookup too')
})
