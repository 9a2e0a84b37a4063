import t from 'tap'
import { SharedStore, type StoreObserver, type StoreState } from '../../src/shared/store.js'
import { PINGS_MISSED, type SubscriptionState } from '../../src/shared/subscription.js'
import { requireTool } from '../fixtures/deploy/tools.js'
import { RedisServer } from '../../harness/redis-server.js'
import { until } from '../../harness/wait.js'

const WHY = 'the shared subscription\'s tests'

// The subscribing connection (through SharedStore, as the tier opens it) against a real
// redis-server started after it, killed and restarted: heard from whenever the store first
// answers, its state told. A refused subscription asked again: the ACL and the BUSY tests
// below, and test/shared/shared-answers.test.ts.

interface Logged { level: 'info' | 'warn', message: string }

function recorder (): { log: { info: (f: object, m: string) => void, warn: (f: object, m: string) => void }, lines: Logged[] } {
  const lines: Logged[] = []
  return {
    lines,
    log: {
      info: (_fields, message) => { lines.push({ level: 'info', message }) },
      warn: (_fields, message) => { lines.push({ level: 'warn', message }) }
    }
  }
}

function observer (): StoreObserver & { subscription: SubscriptionState[], states: StoreState[] } {
  const subscription: SubscriptionState[] = []
  const states: StoreState[] = []
  return {
    subscription,
    states,
    sharedOperation () {},
    sharedStoreState: (state) => { states.push(state) },
    sharedSubscriptionState: (state) => { subscription.push(state) }
  }
}

t.test('a store that comes up after the replica: the subscription made before it answers is heard once it does (fails with the old options: no offline queue, no re-subscription on \'ready\')', async (t) => {
  if (!requireTool(t, 'redis-server', WHY)) return
  const redis = await RedisServer.reserve()
  t.teardown(async () => { await redis.stop() })
  const { log, lines } = recorder()
  const seen = observer()
  const store = await SharedStore.open({ url: redis.url, log, observer: seen, commandTimeoutMs: 1000 })
  t.teardown(() => store.close())
  const heard: string[] = []
  store.subscribe('heads', (message) => heard.push(message))
  await until(() => store.state === 'down' && !store.hearing, 'both connections down')
  // Several failed attempts: the one that flushed the queued SUBSCRIBE came first.
  await new Promise((resolve) => setTimeout(resolve, 600))
  await redis.launch()
  await until(() => store.state === 'up' && store.hearing, 'both up once the store is', { timeoutMs: 5000 })
  const admin = await redis.admin()
  await until(async () => {
    await admin.publish('heads', 'h')
    return heard.length > 0
  }, 'a message published after the store came up is heard')
  t.same(await admin.pubSubNumSub('heads'), { heads: 1 }, 'subscribed on the store')
  t.same(seen.subscription, ['down', 'up'], 'its state told: down, then up')
  t.ok(lines.some((l) => l.level === 'info' && l.message.startsWith('shared subscription up')), 'and logged')

  // Killed and restarted: the client subscribes again, as before.
  await redis.restart()
  await until(() => seen.subscription.length >= 4 && store.hearing, 'the subscription down, then up again', { timeoutMs: 5000 })
  heard.length = 0
  await until(async () => {
    await admin.publish('heads', 'again')
    return heard.includes('again')
  }, 'heard after the restart')
})

t.test('one channel of two refused (an ACL that allows only heads): not up, and said so until both are held', async (t) => {
  if (!requireTool(t, 'redis-server', WHY)) return
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.stop() })
  const admin = await redis.admin()
  await admin.aclSetUser('half', ['on', '>half-password', '~*', '+@all', 'resetchannels', '&heads'])
  const fields: object[] = []
  const lines: Logged[] = []
  const log = {
    info: (f: object, message: string) => { fields.push(f); lines.push({ level: 'info', message }) },
    warn: (f: object, message: string) => { fields.push(f); lines.push({ level: 'warn', message }) }
  }
  const url = redis.url.replace('redis://', 'redis://half:half-password@')
  const store = await SharedStore.open({ url, log, observer: undefined, commandTimeoutMs: 1000 })
  t.teardown(() => store.close())
  store.subscribe('heads', () => {})
  store.subscribe('answers', () => {})
  await until(() => lines.some((l) => l.message.startsWith('shared subscription down')), 'the refusal logged')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.notOk(store.hearing, 'heads held, answers refused: not hearing')
  t.notOk(lines.some((l) => l.message.startsWith('shared subscription up')), 'never said up')
  // The down line itself (other lines of the store's may follow it within the 300 ms).
  const down = fields[lines.findIndex((l) => l.message.startsWith('shared subscription down'))]
  t.match(down, { store: String, previous: 'connecting', error: /NOPERM|permission/i }, 'the line names the store, the state before and the refusal')
  await admin.aclSetUser('half', ['allchannels'])
  await admin.sendCommand(['CLIENT', 'KILL', 'USER', 'half'])
  await until(() => store.hearing, 'both held once allowed')
  t.equal(lines.filter((l) => l.level === 'info' && l.message === 'shared subscription up; this replica hears the pool\'s heads and built answers').length, 1, 'then up, once')
  t.equal(lines.filter((l) => l.message.startsWith('shared subscription down')).length, 1, 'one down line: the refusal, not again for the connection killed while down')
  store.close()
  await admin.sendCommand(['CLIENT', 'KILL', 'USER', 'half'])
  await new Promise((resolve) => setTimeout(resolve, 200))
  // The store's own lines (its command connection, killed too) may come later: only the subscription's are looked at.
  t.equal(lines.filter((l) => l.message.startsWith('shared subscription')).at(-1)?.message.startsWith('shared subscription up'), true, 'closed: nothing more said')
})

t.test('a ping the store refuses says the subscription down with its connection kept; the first ping answered again says it up, without a reconnection', async (t) => {
  if (!requireTool(t, 'redis-server', WHY)) return
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.stop() })
  const admin = await redis.admin()
  // An ACL that forbids PING: the connection stays open, only its pings fail.
  await admin.aclSetUser('noping', ['on', '>noping-password', '~*', '&*', '+@all', '-ping'])
  const { log, lines } = recorder()
  const seen = observer()
  const url = redis.url.replace('redis://', 'redis://noping:noping-password@')
  const store = await SharedStore.open({ url, log, observer: seen, commandTimeoutMs: 1000, pingIntervalMs: 100 })
  t.teardown(() => store.close())
  store.subscribe('heads', () => {})
  await until(() => seen.subscription.includes('down'), 'the refused ping says it down')
  t.same(seen.subscription, ['up', 'down'], 'up once subscribed, down at the first refused ping')
  t.match(lines.at(-1), { level: 'warn', message: /^shared subscription down/ })
  const subscriber = async (): Promise<string[]> => (await admin.sendCommand(['CLIENT', 'LIST']) as string).split('\n').filter((l) => l.includes('name=edge-api-sub')).map((l) => l.split(' ')[0] as string)
  const kept = await subscriber()
  t.equal(kept.length, 1, 'its connection kept')
  await admin.aclSetUser('noping', ['+ping'])
  await until(() => store.hearing, 'up again at the next ping answered', { timeoutMs: 3000 })
  t.same(seen.subscription, ['up', 'down', 'up'])
  t.same(await subscriber(), kept, 'on the same connection')
})

t.test(`a store frozen under a held subscription (SIGSTOP) answers no ping: down after ${PINGS_MISSED} ping intervals, up at the first ping answered once thawed`, async (t) => {
  if (!requireTool(t, 'redis-server', WHY)) return
  const redis = await RedisServer.start()
  t.teardown(async () => { redis.thaw(); await redis.stop() })
  const { log, lines } = recorder()
  const seen = observer()
  const store = await SharedStore.open({ url: redis.url, log, observer: seen, commandTimeoutMs: 1000, pingIntervalMs: 100 })
  t.teardown(() => store.close())
  store.subscribe('heads', () => {})
  await until(() => store.hearing, 'subscribed')
  redis.freeze()
  const frozenAt = performance.now()
  await until(() => !store.hearing, 'down while the store answers nothing', { timeoutMs: 3000 })
  const tookMs = performance.now() - frozenAt
  t.ok(tookMs >= 100 && tookMs < 1500, `said down ${Math.round(tookMs)} ms after the freeze (pings every 100 ms)`)
  t.match(lines.at(-1), { level: 'warn', message: /^shared subscription down/ })
  redis.thaw()
  await until(() => store.hearing, 'up again at the ping answered after the thaw', { timeoutMs: 3000 })
  t.same(seen.subscription, ['up', 'down', 'up'])
})

t.test('closed while its subscription waits for a frozen store (SIGSTOP): nothing said after the close, though the client drops the queued SUBSCRIBE', async (t) => {
  if (!requireTool(t, 'redis-server', WHY)) return
  const redis = await RedisServer.start()
  t.teardown(async () => { redis.thaw(); await redis.stop() })
  redis.freeze()
  const { log, lines } = recorder()
  const seen = observer()
  const store = await SharedStore.open({ url: redis.url, log, observer: seen, commandTimeoutMs: 1000 })
  store.subscribe('heads', () => {})
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same(seen.subscription, [], 'still connecting: the store accepted the connection but answers nothing')
  store.close()
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(seen.subscription, [], 'no state told after the close')
  t.notOk(lines.some((l) => l.message.startsWith('shared subscription')), 'no line either')
})

t.test('a SUBSCRIBE the store refuses for a while (BUSY: a script running) is asked again on the next \'ready\': heard, and up', async (t) => {
  if (!requireTool(t, 'redis-server', WHY)) return
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.stop() })
  const admin = await redis.admin()
  await admin.configSet('busy-reply-threshold', '50')
  const seen = observer()
  const store = await SharedStore.open({ url: redis.url, log: recorder().log, observer: seen, commandTimeoutMs: 1000 })
  t.teardown(() => store.close())
  store.subscribe('answers', () => {})
  await until(() => store.hearing, 'the first channel held')
  // Connected before the script: while it runs the store answers a new connection BUSY too.
  const killer = admin.duplicate()
  killer.on('error', () => {})
  await killer.connect()
  t.teardown(async () => { await killer.disconnect().catch(() => {}) })
  // A script that never ends: past busy-reply-threshold the store answers BUSY to a SUBSCRIBE.
  const scripting = admin.duplicate()
  scripting.on('error', () => {})
  await scripting.connect()
  t.teardown(async () => { await scripting.disconnect().catch(() => {}) })
  scripting.eval('while true do end', { keys: [], arguments: [] }).catch(() => {})
  const busy = async (): Promise<boolean> => await killer.ping().then(() => false, (err: Error) => err.message.startsWith('BUSY'))
  await until(busy, 'the store answering BUSY')
  const heard: string[] = []
  store.subscribe('heads', (message) => heard.push(message))
  await until(() => seen.subscription.at(-1) === 'down', 'the refused SUBSCRIBE says the subscription down')
  await killer.scriptKill()
  // The script ends at its next check: until then the store still answers BUSY.
  await until(async () => !(await busy()), 'the store answering again once the script is killed')
  // The store answers again; the next connection's 'ready' asks for the refused channel.
  await killer.clientKill({ filter: 'TYPE', type: 'pubsub' })
  await until(async () => {
    await killer.publish('heads', 'h')
    return heard.length > 0
  }, 'a message on the channel once refused is heard after the reconnection', { timeoutMs: 10_000 })
  await until(() => store.hearing, 'up once both channels are held', { timeoutMs: 5000 })
  t.same(await killer.pubSubNumSub('heads'), { heads: 1 }, 'subscribed on the store')
})
