import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { ChainHeads } from '../../src/chain/heights.js'
import { headsChannel, HeadHints, HINT_SLACK_BLOCKS, type HintResult } from '../../src/shared/head-hints.js'
import { SharedStore } from '../../src/shared/store.js'
import { redisFor } from '../fixtures/redis.js'
import { type RedisServer } from '../../harness/redis-server.js'
import { ManualClock } from '../fixtures/manual-clock.js'
import { until } from '../../harness/wait.js'

const WHY = 'the shared heads\' tests'

// The pool's heads as hints, on a real redis-server and this replica's real ChainHeads. Its
// nodes are what its poll says they are: `chain.height` is what every node answers, and a
// poll can be made to hang. The eRPC and Lava incidents are reproduced: a head published
// 10^6 blocks ahead (lava#2323's inflated value) and a stale head on a restarted store
// (erpc#924's inherited floor); neither holds a replica for more than its bounded time.

const NODE_LAG = 2
const NETWORK = 'gonka-mainnet'
/** The channel this test's replicas publish on. */
const HEADS_CHANNEL_OF_TEST = headsChannel(NETWORK)
const quiet = { info () {}, warn () {} }

interface Replica {
  readonly heads: ChainHeads
  readonly hints: HeadHints
  readonly results: HintResult[]
  readonly warnings: string[]
  /** Each warn and info line's fields, as an operator reads them. */
  readonly warned: object[]
  readonly informed: object[]
  readonly chain: { height: number, polls: number, hang: boolean }
}

async function store (t: Test, redis: RedisServer): Promise<SharedStore> {
  const opened = await SharedStore.open({ url: redis.url, log: quiet })
  t.teardown(() => opened.close())
  await until(() => opened.state === 'up', 'the store up')
  return opened
}

/** Once B hears what is published (its subscription is in place). */
async function subscribed (redis: RedisServer, b: Replica): Promise<void> {
  const admin = await redis.admin()
  await until(async () => {
    await admin.publish(HEADS_CHANNEL_OF_TEST, '100 someone')
    return b.results.includes('behind')
  }, 'B subscribed')
}

async function replica (t: Test, redis: RedisServer, height: number, options: { waitMs?: number, quietMs?: number, clock?: ManualClock } = {}): Promise<Replica> {
  const { waitMs, ...hinting } = options
  const chain = { height, polls: 0, hang: false }
  const results: HintResult[] = []
  const warnings: string[] = []
  const warned: object[] = []
  const informed: object[] = []
  const heads: ChainHeads = new ChainHeads({
    nodeCount: 2,
    maxLag: NODE_LAG,
    maxAgeMs: 60_000,
    log: undefined,
    urls: ['http://a', 'http://b'],
    poll: async () => {
      chain.polls++
      if (chain.hang) await sleep(1000)
      heads.observe(0, chain.height, 'poll')
      heads.observe(1, chain.height - 1, 'poll')
    },
    lookWaitMs: waitMs,
    clock: options.clock
  })
  const hints = new HeadHints({
    network: NETWORK,
    store: await store(t, redis),
    heads,
    maxLag: NODE_LAG,
    onHint: (result) => results.push(result),
    log: { info: (fields) => { informed.push(fields) }, warn: (fields, message) => { warnings.push(message); warned.push(fields) } },
    ...hinting
  })
  t.teardown(() => { hints.close() })
  await heads.latest()
  return { heads, hints, results, warnings, warned, informed, chain }
}

t.test('a head one replica\'s nodes confirm reaches the other at once; its next latest-state read is at that head', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const a = await replica(t, redis, 100)
  const b = await replica(t, redis, 100)
  // The subscriptions are in place once a publish is heard.
  await subscribed(redis, b)
  t.equal(await b.heads.latest(), 100)

  // The chain moves; A's poll sees it first and publishes it; B has not polled (its head is fresh for a minute).
  a.chain.height = 101
  b.chain.height = 101
  const pollsBefore = b.chain.polls
  await a.heads.poll()
  t.ok(a.results.includes('published'), 'A published its new best head')
  await until(() => b.results.includes('looked'), 'B took the hint')
  t.equal(await b.heads.latest(), 101, 'B serves the new head: its own nodes confirmed it')
  t.equal(b.chain.polls, pollsBefore + 1, 'one look of B\'s own nodes')
  t.ok(b.results.includes('confirmed'))
  t.equal(b.hints.take('102 other'), 'looked', 'a confirmed look leaves no quiet time: the next block\'s hint is looked at too')
  t.same(b.warnings, [], 'plausible heads: nothing to warn of')
})

t.test('the Lava incident: a head 10^6 blocks ahead is ignored at once, logged once, and costs no read anything', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const b = await replica(t, redis, 100)
  const admin = await redis.admin()
  const polls = b.chain.polls
  await until(async () => {
    await admin.publish(HEADS_CHANNEL_OF_TEST, `${100 + 1_000_000} poisoner`)
    return b.results.filter((r) => r === 'implausible').length >= 3
  }, 'three poisoned heads heard')
  t.equal(await b.heads.latest(), 100, 'served from its own nodes, waiting for nothing')
  t.equal(b.chain.polls, polls, 'not even a look')
  t.same(b.warnings, ['shared head ignored: far ahead of every node of this replica'], 'one warning, however many poisoned heads')
  t.same(b.warned, [{ hint: 100 + 1_000_000, best: 100, maxAhead: NODE_LAG + HINT_SLACK_BLOCKS }], 'it names the head published, this replica\'s best and the bound it is beyond')
  t.equal(b.hints.take(`${100 + NODE_LAG + HINT_SLACK_BLOCKS + 1} x`), 'implausible', `the bound: EDGE_API_MAX_NODE_LAG + ${HINT_SLACK_BLOCKS} blocks`)
  t.equal(b.hints.take(`${100 + NODE_LAG + HINT_SLACK_BLOCKS} x`), 'looked', 'within it: looked at')
  t.same(b.informed, [{ hint: 100 + NODE_LAG + HINT_SLACK_BLOCKS, best: 100 }], 'one info line says heads are plausible again, and which')
  t.equal(b.hints.take(`${100 + 1_000_000} poisoner`), 'implausible')
  t.equal(b.warnings.length, 2, 'poisoned again after a plausible head: warned once more')
})

t.test('a plausible head no node of this replica has: one look, then a quiet second; reads wait at most waitMs for a look', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const clock = new ManualClock()
  const b = await replica(t, redis, 100, { waitMs: 30, quietMs: 300, clock })
  t.equal(b.hints.take('102 other'), 'looked')
  t.equal(await b.heads.latest(), 100, 'its nodes do not have 102: served at 100')
  t.ok(b.results.includes('unconfirmed'))
  t.equal(b.hints.take('102 other'), 'ignored', 'within the quiet time, further hints are ignored')
  t.equal(await b.heads.latest(), 100, 'and reads wait for nothing (the manual clock did not move)')
  await clock.advance(299)
  t.equal(b.hints.take('102 other'), 'ignored', 'still quiet a millisecond before quietMs')
  await clock.advance(1)
  b.chain.hang = true
  t.equal(b.hints.take('102 other'), 'looked', 'after it, looked at again')
  let answered = false
  const held = b.heads.latest().then((height) => { answered = true; return height })
  await clock.advance(29)
  await sleep(20)
  t.notOk(answered, 'a hanging look holds a read until waitMs')
  await clock.advance(1)
  t.equal(await held, 100, 'and not the look\'s second: waitMs (30) on the clock')
})

t.test('hints that are not ahead, not numbers, or come before any head of its own are ignored', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const b = await replica(t, redis, 100)
  t.equal(b.hints.take('99 other'), 'behind')
  t.equal(b.hints.take('100 other'), 'behind')
  t.equal(b.hints.take('abc other'), 'ignored')
  t.equal(b.hints.take('-5 other'), 'ignored')
  const fresh = new ChainHeads({ nodeCount: 1, maxLag: NODE_LAG, maxAgeMs: 1000, log: undefined, urls: ['http://a'], poll: async () => {} })
  const hints = new HeadHints({ network: NETWORK, store: await store(t, redis), heads: fresh, maxLag: NODE_LAG, log: quiet })
  t.teardown(() => { hints.close() })
  t.equal(hints.take('100 other'), 'ignored', 'no head of its own yet: nothing to judge a hint by')
  t.equal(hints.take('100 other'), 'ignored', 'without onHint too')
})

t.test('the eRPC incident: a store restarted with a stale head (or flushed) holds nothing back; heads flow again once it is up', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const a = await replica(t, redis, 100)
  const b = await replica(t, redis, 100)
  await subscribed(redis, b)
  await redis.restart()
  const admin = await redis.admin()
  // What a store could hand a restarted pool: an old head, on the channel and in a key.
  await admin.set('edge-api:1:head', '50')
  await until(async () => {
    await admin.publish(HEADS_CHANNEL_OF_TEST, '50 stale')
    return b.results.filter((r) => r === 'behind').length >= 2
  }, 'the stale head heard after the restart', { timeoutMs: 5000 })
  for (const r of [a, b]) r.chain.height = 105
  await b.heads.poll()
  t.equal(await b.heads.latest(), 105, 'a stale head is no floor: each replica serves what its own nodes say')
  // A head published while A's connection was still coming back is lost: the next one goes through.
  const recovered = performance.now()
  await until(async () => {
    for (const r of [a, b]) r.chain.height++
    await a.heads.poll()
    await sleep(20)
    return b.results.includes('confirmed')
  }, 'a head shared again after the restart', { timeoutMs: 5000, intervalMs: 50 })
  t.comment(`heads shared again ${(performance.now() - recovered).toFixed(0)} ms after the restarted store answered`)
  // The confirmation seen may be of the round before the last (the last's hint still on its
  // way): B comes to the chain's height without another head of its own.
  await until(async () => await b.heads.latest() === b.chain.height, `B at the chain's height, ${b.chain.height}`, { timeoutMs: 5000, intervalMs: 20 })
})

t.test('a head published while a look for a lower one is under way is looked for after it, not dropped; one at or below it joins it', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const b = await replica(t, redis, 100)
  b.chain.hang = true
  const polls = b.chain.polls
  t.equal(b.hints.take('101 other'), 'looked')
  t.equal(b.hints.take('101 other'), 'ignored', 'the same head: joins the look under way, counted as no look')
  // 102 exists only once the first look has asked (it hangs for a second).
  t.equal(b.hints.take('102 other'), 'looked', 'a higher head: a look of its own, after the one under way')
  b.chain.height = 102
  b.chain.hang = false
  await until(() => b.results.filter((r) => r === 'confirmed').length === 2, 'both looks ended', { timeoutMs: 5000 })
  t.equal(b.chain.polls, polls + 2, 'two polls: the second asked after 102 existed')
  t.equal(await b.heads.latest(), 102, 'served at the head the second look found')
  t.same(b.results.filter((r) => r !== 'published'), ['looked', 'ignored', 'looked', 'confirmed', 'confirmed'])
})

t.test('this replica\'s new heads are published after the exchange that told them, and no more once closed', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const a = await replica(t, redis, 100)
  const b = await replica(t, redis, 100)
  await subscribed(redis, b)
  const before = a.results.filter((r) => r === 'published').length
  a.heads.observe(0, 101, 'latest')
  t.equal(a.results.filter((r) => r === 'published').length, before, 'nothing sent from inside the exchange that told the head')
  await until(() => b.results.includes('looked'), 'B heard 101')
  t.equal(a.results.filter((r) => r === 'published').length, before + 1, 'published once the exchange\'s turn ended')
  a.hints.close()
  const published = before + 1
  a.heads.observe(0, 102, 'latest')
  await sleep(50)
  t.equal(a.results.filter((r) => r === 'published').length, published, 'closed: 102 not published')
})
