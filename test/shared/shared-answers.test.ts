import t, { type Test } from 'tap'
import { AnswerSeal } from '../../src/shared/answer-value.js'
import { ANSWER_TTL_MS, MAX_SHARED_BYTES, SHARED_PREFIX, SharedAnswers, WAIT_FOR_BUILD_MS, type SharedLookup } from '../../src/shared/shared-answers.js'
import { SharedStore, type Operation, type OperationResult } from '../../src/shared/store.js'
import { redisFor } from '../fixtures/redis.js'
import { type RedisServer } from '../../harness/redis-server.js'
import { until } from '../../harness/wait.js'

const WHY = 'the shared answers\' tests'

// The pool's answers on a real redis-server: one replica claims a key and builds it, the
// others find its answer or are woken by its word (built, or released), and nothing is
// served that this chain's, this format's builder did not make.

const quiet = { info () {}, warn () {} }
const answer = (text: string, contentType = 'application/json; charset=utf-8') => ({ body: Buffer.from(text), contentType, etag: '"local"' })
const shared = (text: string) => ({ body: Buffer.from(text), contentType: 'application/json; charset=utf-8', etag: '' })
const NETWORK = 'gonka-mainnet'
const FORMAT = '1.0.0+abc'
const nameOf = (key: string, network = NETWORK, format = FORMAT): string => `${SHARED_PREFIX}${network}:${format}:answer:${key}`

interface Replica { answers: SharedAnswers, results: SharedLookup[], commands: string[], store: SharedStore }

interface ReplicaOptions { network?: string | undefined, format?: string, secret?: string, waitMs?: number, url?: string }

async function replica (t: Test, redis: RedisServer, options: ReplicaOptions = {}): Promise<Replica> {
  const commands: string[] = []
  const observer = { sharedOperation: (o: Operation, r: OperationResult) => { commands.push(`${o} ${r}`) }, sharedStoreState () {}, sharedSubscriptionState () {} }
  // A deadline a loaded test machine keeps: these tests are about what is shared, not about deadlines (store.test.ts).
  const store = await SharedStore.open({ url: options.url ?? redis.url, log: quiet, observer, commandTimeoutMs: 1000 })
  t.teardown(() => store.close())
  await until(() => store.state === 'up', 'the store up')
  const results: SharedLookup[] = []
  const network = 'network' in options ? options.network : NETWORK
  const answers = new SharedAnswers({ store, network: () => network, format: options.format ?? FORMAT, secret: options.secret, onLookup: (r) => results.push(r), waitMs: options.waitMs })
  if (options.url === undefined) await until(() => store.hearing, 'subscribed')
  return { answers, results, commands, store }
}

async function timed<T> (work: Promise<T>): Promise<{ value: T, ms: number }> {
  const started = performance.now()
  const value = await work
  return { value, ms: performance.now() - started }
}

t.test('one replica claims and builds; another finds the same bytes and content type, not its ETag', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const a = await replica(t, redis)
  const b = await replica(t, redis)
  t.equal(await a.answers.find('/v1/epochs/latest {} @100'), undefined, 'A misses and holds the claim')
  t.equal(a.commands.length, 2, 'the look and the claim: one round trip, nothing more for a claim the store granted')
  t.equal(await (await redis.admin()).get(`${SHARED_PREFIX}${NETWORK}:${FORMAT}:building:/v1/epochs/latest {} @100`), await a.store.get(`${SHARED_PREFIX}${NETWORK}:${FORMAT}:building:/v1/epochs/latest {} @100`), 'the claim names its owner')
  a.answers.keep('/v1/epochs/latest {} @100', answer('{"é":1}'))
  await until(async () => (await (await redis.admin()).exists(nameOf('/v1/epochs/latest {} @100'))) === 1, 'the answer stored')
  t.same(await b.answers.find('/v1/epochs/latest {} @100'), shared('{"é":1}'), 'B finds it, byte for byte; the ETag is B\'s cache\'s to compute')
  t.same([a.results, b.results], [['claimed'], ['hit']])
  t.notMatch(await (await redis.admin()).get(nameOf('/v1/epochs/latest {} @100')), /"local"/, 'the ETag is not stored')
  const ttl = await (await redis.admin()).pTTL(nameOf('/v1/epochs/latest {} @100'))
  t.ok(ttl > ANSWER_TTL_MS - 10_000 && ttl <= ANSWER_TTL_MS, `kept with a TTL (${ttl} ms), never for ever`)
})

t.test('a slow build (300 ms) is paid once: the others are woken by its word, not polling, and a replica never waits on its own claim', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const [a, b, c] = [await replica(t, redis), await replica(t, redis), await replica(t, redis)]
  t.equal(await a.answers.find('k@1'), undefined, 'A claims k@1')
  setTimeout(() => { a.answers.keep('k@1', answer('"built once"')) }, 300)
  const [fromB, fromC] = await Promise.all([timed(b.answers.find('k@1')), timed(c.answers.find('k@1'))])
  t.same([fromB.value, fromC.value], [shared('"built once"'), shared('"built once"')], 'B and C serve A\'s answer instead of asking the chain')
  t.same([b.results, c.results], [['waited'], ['waited']])
  t.ok(fromB.ms >= 250 && fromB.ms < WAIT_FOR_BUILD_MS, `B waited for the build (${fromB.ms.toFixed(0)} ms), within its bound (${WAIT_FOR_BUILD_MS} ms)`)
  t.ok(b.commands.length <= 4, `B sent ${b.commands.length} commands while waiting (the look, the claim, its holder, the look once woken), no polling`)

  const gaveUp = await replica(t, redis, { waitMs: 100 })
  t.equal(await a.answers.find('k@9'), undefined, 'A claims k@9 and never finishes')
  const never = await timed(gaveUp.answers.find('k@9'))
  t.equal(never.value, undefined)
  t.same(gaveUp.results, ['gave_up'], 'no word within its wait: it builds its own')
  t.ok(never.ms >= 50 && never.ms < 1000, `after about its bound (${never.ms.toFixed(0)} ms; 100 ms, armed before the look)`)

  t.equal(await a.answers.find('k@2'), undefined, 'A claims k@2')
  const own = await timed(a.answers.find('k@2'))
  t.equal(own.value, undefined, 'its own claim still held (its release lost): A builds again')
  t.ok(own.ms < 200, `at once (${own.ms.toFixed(0)} ms): it never waits on itself`)
  t.same(a.results, ['claimed', 'claimed', 'claimed', 'claimed'])
  // Each name's waiters go with their wait's end, whatever ended it: nothing grows with the keys missed.
  t.same([a, b, c, gaveUp].map((r) => r.answers.waiting), [0, 0, 0, 0], 'no waiter left behind')
})

t.test('a key whose build is not shared (a 404): its waiters are woken at once, and its next miss costs no wait', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  // B waits up to 5 s: woken within a second says it was the word, not the end of its wait.
  const [a, b, c] = [await replica(t, redis), await replica(t, redis, { waitMs: 5000 }), await replica(t, redis)]
  t.equal(await a.answers.find('/v1/bls/signatures/x@5'), undefined, 'A claims it')
  const waiting = b.answers.find('/v1/bls/signatures/x@5')
  await until(async () => (await (await redis.admin()).pubSubNumSub('edge-api:2:answers'))['edge-api:2:answers'] === 3, 'all subscribed')
  // Another program's message on the channel, then the builder's word.
  await (await redis.admin()).publish('edge-api:2:answers', 'nonsense')
  await new Promise((resolve) => setTimeout(resolve, 100))
  const released = performance.now()
  a.answers.release('/v1/bls/signatures/x@5')
  t.equal(await waiting, undefined, 'B builds its own')
  const woken = performance.now() - released
  t.same(b.results, ['released'])
  t.ok(woken < 1000, `woken by A's word ${woken.toFixed(0)} ms after it, not at the end of its 5 s wait`)
  const next = await timed(c.answers.find('/v1/bls/signatures/x@5'))
  t.equal(next.value, undefined)
  t.same(c.results, ['claimed'], 'the claim was let go: the next miss claims it')
  t.same([a, b, c].map((r) => r.answers.waiting), [0, 0, 0], 'no waiter left behind')
  t.ok(next.ms < 100, `with no wait (${next.ms.toFixed(0)} ms)`)

  a.answers.keep('big@1', answer(`"${'x'.repeat(MAX_SHARED_BYTES)}"`))
  // A's second release: the first was the 404's, above.
  await until(async () => a.commands.filter((c) => c === 'release ok').length === 2, 'an answer too large is released, not stored')
  t.equal(await (await redis.admin()).exists(nameOf('big@1')), 0)
})

t.test('a store whose writes pause (a failover\'s CLIENT PAUSE WRITE) while reads are answered: a claim that times out alone is a miss at once, not a wait for a word', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  // Would it wait for a word, it would wait 5 s: answered within 2 says it did not.
  const a = await replica(t, redis, { waitMs: 5000 })
  await (await redis.admin()).sendCommand(['CLIENT', 'PAUSE', '2500', 'WRITE'])
  t.teardown(async () => { await (await redis.admin()).sendCommand(['CLIENT', 'UNPAUSE']) })
  const paused = await timed(a.answers.find('k@6'))
  t.equal(paused.value, undefined, 'this replica builds')
  t.same(a.results, ['unavailable'], 'counted as the store not saying, not as a wait given up')
  t.ok(paused.ms < 2000, `after the claim's deadline only (${paused.ms.toFixed(0)} ms; the command deadline is 1000 ms)`)
  t.equal(a.answers.waiting, 0)
})

t.test('values checked before use: a planted, altered, unsigned or non-JSON value is a miss, and the replica builds', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const admin = await redis.admin()
  const secret = 'a secret of the pool, 32 chars..'
  const a = await replica(t, redis, { secret })
  const seal = new AnswerSeal(secret)
  const key = '/v1/participants {} @7'
  const planted = {
    'not our shape': 'no newlines here',
    'a content type not on the list (text/html)': `text/html\n${seal.encode(nameOf(key), answer('<script>1</script>', 'text/html')).split('\n')[1] as string}\n<script>1</script>`,
    'bytes altered after signing': seal.encode(nameOf(key), answer('{"a":1}')).replace('{"a":1}', '{"a":2}'),
    'signed for another key': seal.encode(nameOf('/v1/participants {} @8'), answer('{"a":1}')),
    'made without the secret': new AnswerSeal(undefined).encode(nameOf(key), answer('{"a":1}')),
    'signed, but not JSON': seal.encode(nameOf(key), answer('{"a":'))
  }
  for (const [what, value] of Object.entries(planted)) {
    await admin.set(nameOf(key), value)
    await admin.del(`${SHARED_PREFIX}${NETWORK}:${FORMAT}:building:${key}`)
    t.equal(await a.answers.find(key), undefined, `${what}: not served`)
  }
  t.same(a.results, Object.keys(planted).map(() => 'claimed'), 'each time a miss: this replica builds')
  await admin.set(nameOf(key), seal.encode(nameOf(key), answer('{"a":1}')))
  t.same(await a.answers.find(key), shared('{"a":1}'), 'a value its pool signed is served')
  await admin.set(nameOf('text@1'), seal.encode(nameOf('text@1'), answer('ok', 'text/plain; charset=utf-8')))
  t.same(await a.answers.find('text@1'), { ...shared('ok'), contentType: 'text/plain; charset=utf-8' }, 'text from the list, not parsed')
})

t.test('another chain\'s or another format\'s answers are neither read nor waited for; a replica that does not know its network shares nothing', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const mainnet = await replica(t, redis)
  const testnet = await replica(t, redis, { network: 'gonka-testnet' })
  const upgraded = await replica(t, redis, { format: '1.1.0+def' })
  const booting = await replica(t, redis, { network: undefined })
  t.equal(await mainnet.answers.find('/v1/debug/verify/5 {} @5'), undefined)
  mainnet.answers.keep('/v1/debug/verify/5 {} @5', answer('"mainnet"'))
  await until(async () => (await (await redis.admin()).exists(nameOf('/v1/debug/verify/5 {} @5'))) === 1, 'mainnet\'s answer stored')
  t.equal(await testnet.answers.find('/v1/debug/verify/5 {} @5'), undefined, 'testnet builds its own')
  t.equal(await upgraded.answers.find('/v1/debug/verify/5 {} @5'), undefined, 'so does another build')
  t.same([testnet.results, upgraded.results], [['claimed'], ['claimed']], 'each claims in its own names: no wait on another chain\'s build')
  const before = booting.commands.length
  t.equal(await booting.answers.find('/v1/debug/verify/5 {} @5'), undefined)
  booting.answers.keep('/v1/debug/verify/5 {} @5', answer('"booting"'))
  booting.answers.release('/v1/debug/verify/5 {} @5')
  t.same(booting.results, ['unavailable'])
  t.equal(booting.commands.length, before, 'no command sent before the network is known')
})

t.test('a replica that cannot be woken (its subscription refused) does not wait; a store that does not answer: a miss at once', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const admin = await redis.admin()
  // A user allowed every command but no channel: its SUBSCRIBE is refused.
  await admin.aclSetUser('deaf', ['on', '>deaf-password', '~*', '+@all', 'resetchannels'])
  const a = await replica(t, redis)
  const deaf = await replica(t, redis, { url: redis.url.replace('redis://', 'redis://deaf:deaf-password@') })
  t.equal(await a.answers.find('k@3'), undefined, 'A claims k@3')
  const attempt = await timed(deaf.answers.find('k@3'))
  t.equal(attempt.value, undefined)
  t.same(deaf.results, ['unavailable'], 'not hearing: builds its own')
  t.ok(attempt.ms < 200, `at once (${attempt.ms.toFixed(0)} ms)`)
  await admin.aclSetUser('deaf', ['allchannels'])
  await admin.sendCommand(['CLIENT', 'KILL', 'USER', 'deaf'])
  await until(() => deaf.store.hearing, 'allowed the channel and reconnected: the refused subscription asked again', { timeoutMs: 5000 })
  await redis.kill()
  await until(() => a.store.state === 'down', 'the store down')
  const down = await timed(a.answers.find('k@4'))
  t.equal(down.value, undefined)
  t.ok(down.ms < 50, `at once (${down.ms.toFixed(0)} ms; no deadline waited)`)
  t.same(a.results, ['claimed', 'unavailable'])
  const plain = new SharedAnswers({ store: a.store, network: () => NETWORK, format: FORMAT })
  t.equal(await plain.find('k@4'), undefined, 'without onLookup too')
})
