import t from 'tap'
import { freePorts } from '../../harness/ports.js'
import { requireTool } from '../fixtures/deploy/tools.js'
import { RedisServer } from '../../harness/redis-server.js'
import { redisFor } from '../fixtures/redis.js'
import { until } from '../../harness/wait.js'
import { redactedUrl, SharedStore, TIMEOUTS_TO_UNRESPONSIVE, type StoreObserver, type StoreState } from '../../src/shared/store.js'
import type { SubscriptionState } from '../../src/shared/subscription.js'

const WHY = 'the shared store\'s tests'

// The store connection against a real redis-server: commands within their deadline, nothing
// thrown, one log line per change of state, and the store killed, frozen (SIGSTOP), flushed
// and restarted as it is in production.

interface Logged { level: 'info' | 'warn', fields: Record<string, unknown>, message: string }

function recorder (): { log: { info: (f: object, m: string) => void, warn: (f: object, m: string) => void }, lines: Logged[] } {
  const lines: Logged[] = []
  return {
    lines,
    log: {
      info: (fields, message) => { lines.push({ level: 'info', fields: fields as Record<string, unknown>, message }) },
      warn: (fields, message) => { lines.push({ level: 'warn', fields: fields as Record<string, unknown>, message }) }
    }
  }
}

interface Seen extends StoreObserver { operations: string[], states: StoreState[], subscription: SubscriptionState[] }

function observer (): Seen {
  const operations: string[] = []
  const states: StoreState[] = []
  const subscription: SubscriptionState[] = []
  return {
    operations,
    states,
    subscription,
    sharedOperation: (operation, result) => { operations.push(`${operation} ${result}`) },
    sharedStoreState: (state) => { states.push(state) },
    sharedSubscriptionState: (state) => { subscription.push(state) }
  }
}

async function timed<T> (work: () => Promise<T>): Promise<{ value: T, ms: number }> {
  const started = performance.now()
  const value = await work()
  return { value, ms: performance.now() - started }
}

t.test('redactedUrl hides the whole userinfo (the secret may be in either slot) and nothing else', async (t) => {
  t.equal(redactedUrl('redis://user:s3cret@cache:6380/2'), 'redis://***@cache:6380/2')
  t.equal(redactedUrl('rediss://:s3cret@cache'), 'rediss://***@cache')
  t.equal(redactedUrl('redis://s3cret@cache'), 'redis://***@cache', 'the password given where the user goes')
  t.equal(redactedUrl('redis://cache:6379'), 'redis://cache:6379')
})

t.test('up: get, set, claim and publish/subscribe round trips; one log line, without the password', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const { log, lines } = recorder()
  const seen = observer()
  const store = await SharedStore.open({ url: redis.url, log, observer: seen, commandTimeoutMs: 1000 })
  t.teardown(() => store.close())
  t.equal(store.state, 'connecting', 'connects in the background: open() does not wait for it')
  await until(() => store.state === 'up', 'the store up')
  t.same(lines.filter((l) => l.message.startsWith('shared store')).map((l) => [l.level, l.message, l.fields.store]), [['info', 'shared store up; replicas share heads and answers', redis.url]])
  t.same(seen.states, ['up'])

  t.equal(await store.get('k'), undefined, 'nothing there')
  store.set('k', 'v', 10_000)
  await until(async () => await store.get('k') === 'v', 'the value set in the background')
  const ttl = await (await redis.admin()).pTTL('k')
  t.ok(ttl > 0 && ttl <= 10_000, `kept for its TTL (${ttl} ms), not for ever`)
  t.equal(await store.claim('c', 'me', 60_000), true, 'a free key is claimed')
  t.equal(await store.claim('c', 'other', 60_000), false, 'and then held')
  t.equal(await store.get('c'), 'me', 'in its owner\'s name')
  store.release('c', 'other')
  // One connection: the get goes after the release.
  t.equal(await store.get('c'), 'me', 'not released by another')
  store.release('c', 'me')
  t.equal(await store.get('c'), undefined, 'released by its owner, long before its TTL')
  t.ok(seen.operations.filter((op) => op === 'release ok').length >= 1)
  const messages: string[] = []
  store.subscribe('chan', (m) => messages.push(m))
  await until(async () => {
    store.publish('chan', 'hello')
    return messages.length > 0
  }, 'a message published and received')
  t.equal(messages[0], 'hello')
  t.ok(store.hearing, 'its subscribing connection hears the channels')
  t.same(await store.evaluate('count', 'return {KEYS[1], ARGV[1], ARGV[2]}', ['rate:k'], ['10', '20']), ['rate:k', '10', '20'], 'a script run on its keys and arguments, its reply returned (the rate limit\'s GCRA)')
  // A publish's own reply can come after the subscriber has the message: its 'ok' is counted then.
  await until(() => ['get ok', 'set ok', 'claim ok', 'publish ok', 'count ok'].every((op) => seen.operations.includes(op)), 'get, set, claim, publish and a script each counted ok')
})

t.test('killed, restarted empty, frozen, thawed: local answers at once, one line per change, back within a second', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const { log, lines } = recorder()
  const seen = observer()
  const store = await SharedStore.open({ url: redis.url, log, observer: seen, commandTimeoutMs: 5, retryUnresponsiveMs: 200 })
  t.teardown(() => store.close())
  await until(() => store.state === 'up', 'the store up')
  store.set('k', 'v', 60_000)
  await until(async () => await store.get('k') === 'v', 'the value set')

  await redis.kill()
  await until(() => store.state === 'down', 'the store down')
  const down = await timed(() => store.get('k'))
  t.equal(down.value, undefined, 'down: a miss')
  t.ok(down.ms < 50, `and at once (${down.ms.toFixed(2)} ms): no command waits for a store that is not there`)
  t.equal(await store.claim('c', 'me', 1000), undefined, 'a claim says nothing')
  t.ok(seen.operations.includes('get skipped'))

  const restarted = performance.now()
  await redis.restart()
  await until(() => store.state === 'up', 'the store up again', { timeoutMs: 3000 })
  t.comment(`up again ${(performance.now() - restarted).toFixed(0)} ms after the restart began`)
  t.equal(await store.get('k'), undefined, 'restarted empty: a miss, nothing more')

  redis.freeze()
  const frozen: number[] = []
  for (let i = 0; i < TIMEOUTS_TO_UNRESPONSIVE; i++) {
    // After one only: on a loaded machine another command of the store's may time out in the freeze too.
    if (i === 1) t.equal(store.state, 'up', 'still up after one timeout: one slow answer is noise')
    const attempt = await timed(() => store.get('k'))
    t.equal(attempt.value, undefined)
    frozen.push(attempt.ms)
  }
  t.ok(frozen.every((ms) => ms < 250), `frozen: each command gives up at its deadline (${frozen.map((ms) => ms.toFixed(1)).join(', ')} ms; 5 ms, once more after a stall of this process, a loaded machine's timers)`)
  t.equal(store.state, 'unresponsive', `unresponsive after ${TIMEOUTS_TO_UNRESPONSIVE} timeouts`)
  const skipped = await timed(() => store.get('k'))
  t.ok(skipped.ms < 50, `then skipped at once (${skipped.ms.toFixed(2)} ms) until the retry`)
  await new Promise((resolve) => setTimeout(resolve, 250))
  // Past retryUnresponsiveMs: one command tries the store (and times out), the other is skipped.
  const skips = seen.operations.filter((op) => op === 'get skipped').length
  await Promise.all([store.get('k'), store.get('k')])
  t.equal(seen.operations.filter((op) => op === 'get skipped').length, skips + 1, 'one read tries the store after the wait, not every read')
  store.set('x', 'y', 1000)
  store.publish('chan', 'z')
  redis.thaw()
  await until(async () => {
    await store.get('k')
    return store.state === 'up'
  }, 'the store up after the thaw', { timeoutMs: 3000 })
  t.ok(seen.operations.includes('get timeout') && seen.operations.includes('set skipped'))

  t.same(lines.filter((l) => l.message.startsWith('shared store')).map((l) => `${l.level} ${l.fields.previous as string}→${l.message.split(';')[0] as string}`), [
    'info connecting→shared store up',
    'warn up→shared store down',
    'info down→shared store up',
    'warn up→shared store unresponsive',
    'info unresponsive→shared store up'
  ], 'one line per change of state')
  t.same(seen.states, ['up', 'down', 'up', 'unresponsive', 'up'])
})

t.test('a store that never was: the replica is not held up, the password never logged, and close() ends it', async (t) => {
  const [port] = await freePorts(1) as [number]
  const { log, lines } = recorder()
  const store = await SharedStore.open({ url: `redis://edge:s3cret@127.0.0.1:${port}`, log })
  await until(() => store.state === 'down', 'the store down')
  const attempt = await timed(() => store.get('k'))
  t.equal(attempt.value, undefined)
  t.ok(attempt.ms < 50, `a miss at once (${attempt.ms.toFixed(2)} ms)`)
  t.notOk(store.hearing, 'nor does it hear the pool: a miss waits for no other replica\'s word')
  await store.close()
  t.same(lines.map((l) => l.message.split(';')[0]).sort(), ['shared store down', 'shared subscription down'], 'one line for each connection, however many attempts the client makes')
  t.match(lines[0]?.fields.store, `redis://***@127.0.0.1:${port}`)
  t.notMatch(JSON.stringify(lines), /s3cret/, 'the password is never logged')
})

t.test('full: a write the store refuses (maxmemory, noeviction) is an error counted, not thrown; reads go on', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const admin = await redis.admin()
  await admin.configSet({ maxmemory: '1', 'maxmemory-policy': 'noeviction' })
  const { log } = recorder()
  const seen = observer()
  const store = await SharedStore.open({ url: redis.url, log, observer: seen, commandTimeoutMs: 1000 })
  t.teardown(() => store.close())
  await until(() => store.state === 'up', 'the store up')
  store.set('k', 'v'.repeat(1000), 1000)
  t.equal(await store.claim('c', 'me', 1000), undefined, 'a claim the store refuses says nothing')
  await until(() => seen.operations.includes('set error'), 'the refused write counted')
  t.equal(await store.get('k'), undefined, 'reads still answer')
  t.equal(store.state, 'up', 'a refusal is an answer: the store is up')
})

t.test('a stall of the replica\'s own event loop is not the store\'s timeout; a frozen store still times out after it', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const { log } = recorder()
  const seen = observer()
  const store = await SharedStore.open({ url: redis.url, log, observer: seen, commandTimeoutMs: 10 })
  t.teardown(() => store.close())
  await until(() => store.state === 'up', 'the store up')
  store.set('k', 'v', 60_000)
  await until(async () => await store.get('k') === 'v', 'the value set')
  const stall = (ms: number): void => {
    const end = performance.now() + ms
    while (performance.now() < end) { /* a long tick: the timer fires late */ }
  }
  const live = store.get('k')
  // node-redis writes a command in a setImmediate: this one, queued after it, runs once the
  // command is on the wire. Stalled before that, the command left only after the stall, and
  // its answer then had one 10 ms deadline to come back in, which a loaded machine missed once.
  await new Promise((resolve) => setImmediate(resolve))
  stall(100)
  t.equal(await live, 'v', 'asked, then a 100 ms stall past the 10 ms deadline: the answer still counts')
  t.notOk(seen.operations.includes('get timeout'), 'no timeout counted for the replica\'s own stall')

  redis.freeze()
  t.teardown(() => { redis.thaw() })
  const frozen = store.get('k')
  stall(40)
  const started = performance.now()
  t.equal(await frozen, undefined, 'a frozen store: a miss all the same')
  t.ok(performance.now() - started < 1000, 'after one more deadline, not an open-ended wait')
  t.ok(seen.operations.includes('get timeout'))
})

t.test('writes in the background do not judge the store: a frozen store times out a hundred sets and stays up until reads time out', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const { log } = recorder()
  const seen = observer()
  const store = await SharedStore.open({ url: redis.url, log, observer: seen, commandTimeoutMs: 5 })
  t.teardown(() => store.close())
  await until(() => store.state === 'up', 'the store up')
  redis.freeze()
  t.teardown(() => { redis.thaw() })
  for (let i = 0; i < 100; i++) store.set(`k${i}`, 'x'.repeat(1000), 1000)
  store.publish('chan', 'z')
  store.release('c', 'me')
  await until(() => seen.operations.filter((op) => op.endsWith('timeout')).length === 102, 'every write past its deadline')
  t.equal(store.state, 'up', 'writes timing out do not make it unresponsive (A11)')
  for (let i = 0; i < TIMEOUTS_TO_UNRESPONSIVE; i++) await store.get('k')
  t.equal(store.state, 'unresponsive', `${TIMEOUTS_TO_UNRESPONSIVE} reads timing out do`)
  await store.get('k')
  t.equal(seen.operations.at(-1), 'get skipped', 'then reads skip it for the default retry wait')
})

t.test('a store that asks for a password: EDGE_API_REDIS_PASSWORD given apart from the URL is used; without it, no command goes through', async (t) => {
  if (!requireTool(t, 'redis-server', WHY)) return
  const redis = await RedisServer.start({ password: 'a-store-password' })
  t.teardown(async () => { await redis.stop() })
  const bare = redis.url.replace(':a-store-password@', '')
  const { log, lines } = recorder()
  const store = await SharedStore.open({ url: bare, password: 'a-store-password', log, commandTimeoutMs: 1000 })
  t.teardown(() => store.close())
  await until(() => store.state === 'up' && store.hearing, 'both connections up with the password')
  store.set('k', 'v', 10_000)
  await until(async () => await store.get('k') === 'v', 'commands go through')
  const refused = await SharedStore.open({ url: bare, log, commandTimeoutMs: 1000 })
  t.teardown(() => refused.close())
  await until(() => refused.state === 'down', 'without it: down')
  t.equal(await refused.get('k'), undefined)
  t.notMatch(JSON.stringify(lines), /a-store-password/, 'the password is never logged')
})

t.test('the configured command deadline (EDGE_API_REDIS_TIMEOUT) is the one a frozen store is waited for', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const store = await SharedStore.open({ url: redis.url, log: recorder().log, commandTimeoutMs: 300 })
  t.teardown(() => store.close())
  await until(() => store.state === 'up', 'the store up')
  redis.freeze()
  t.teardown(() => { redis.thaw() })
  // A miss's claim and the rate limit's script are read as a get is: the request waits for them.
  const waits = [
    await timed(() => store.get('k')),
    await timed(() => store.claim('c', 'me', 1000)),
    await timed(() => store.evaluate('count', 'return 1', ['k'], []))
  ]
  t.same(waits.map((wait) => wait.value), [undefined, undefined, undefined])
  const ms = waits.map((wait) => wait.ms.toFixed(0)).join(', ')
  t.ok(waits.every((wait) => wait.ms >= 250 && wait.ms < 2000), `a get, a claim and a script each waited its 300 ms (${ms} ms), not the default 10 nor a write's ten deadlines`)
})

t.test('a write the store answers late, within ten deadlines, is counted ok: a large answer on a busy store is not reported as a timeout', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const seen = observer()
  const store = await SharedStore.open({ url: redis.url, log: recorder().log, observer: seen, commandTimeoutMs: 50 })
  t.teardown(() => store.close())
  await until(() => store.state === 'up', 'the store up')
  // The store busy for 200 ms (a script spinning on its clock), the write sent 20 ms into it.
  const busy = 'local t0 = redis.call("TIME") repeat local t = redis.call("TIME") until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) >= 200000 return 1'
  const spinning = (await redis.admin()).eval(busy)
  await new Promise((resolve) => setTimeout(resolve, 20))
  store.set('late', 'v', 10_000)
  await spinning
  await until(() => seen.operations.some((op) => op.startsWith('set ')), 'the write counted')
  t.same(seen.operations.filter((op) => op.startsWith('set ')), ['set ok'], 'answered ~180 ms later: past a read\'s 50 ms, within a write\'s 500')
  t.equal(store.state, 'up')
})
