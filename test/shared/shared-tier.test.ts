import t, { type Test } from 'tap'
import { EPOCH_INFO_PATH } from '../../harness/pool.js'
import { buildTestApp } from '../fixtures/app.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { requireTool } from '../fixtures/deploy/tools.js'
import { RedisServer } from '../../harness/redis-server.js'
import { until } from '../../harness/wait.js'
import { NODE_INFO_PATH } from '../../src/chain/paths.js'
import { ChainHeads } from '../../src/chain/heights.js'
import { NETWORK_RETRY_MS, openSharedTier } from '../../src/shared/shared-tier.js'
import { headsChannel } from '../../src/shared/head-hints.js'
import { ManualClock } from '../fixtures/manual-clock.js'

// The tier as service.ts wires it: two replicas (in process, as main.ts builds them) over one
// chain node and one redis-server. The second replica's miss is the first one's answer, same
// bytes and ETag, and the chain is asked once; without EDGE_API_REDIS_URL nothing is shared.

t.test('two replicas, one store: the second one\'s miss is served from the first one\'s answer, the chain asked once', async (t) => {
  if (!requireTool(t, 'redis-server', 'the shared tier\'s wiring test')) return
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.stop() })
  const sim = await startChainSimulator()
  t.teardown(async () => { await sim.close() })
  // A generous deadline: on a loaded test machine 10 ms is the CPU's, not the store's (EDGE_API_REDIS_TIMEOUT).
  const env = { EDGE_API_REDIS_URL: redis.url, EDGE_API_CACHE_SIZE: '64MiB', EDGE_API_REDIS_TIMEOUT: '250ms' }
  const a = await buildTestApp(t, { sim, env })
  const b = await buildTestApp(t, { sim, env })
  for (const r of [a, b]) await until(() => r.logs.some((l) => l.msg?.startsWith('shared store up') === true), 'the store up')
  for (const r of [a, b]) await until(() => r.logs.some((l) => l.msg?.startsWith('shared answers named') === true && l.network === 'gonka-mainnet'), 'the network known')
  for (const r of [a, b]) await until(() => r.logs.some((l) => l.msg?.startsWith('shared subscription up') === true), 'the subscription up')

  const first = await a.app.inject({ method: 'GET', url: '/v1/epochs/latest' })
  t.equal(first.statusCode, 200)
  t.equal(first.headers['x-cache'], 'miss')
  // A's answer is written in the background: B looks until it is there (a miss of B would build its own).
  await until(async () => {
    const admin = await redis.admin()
    return (await admin.keys('edge-api:2:*:answer:*')).length > 0
  }, 'A\'s answer in the store')
  const second = await b.app.inject({ method: 'GET', url: '/v1/epochs/latest' })
  t.equal(second.statusCode, 200)
  t.equal(second.headers['x-cache'], 'shared', 'from the shared tier')
  if (second.headers['x-cache'] !== 'shared') t.comment((await b.metrics?.scrape() ?? '').split('\n').filter((l) => l.startsWith('edge_api_shared')).join('\n'))
  t.equal(second.headers.etag, first.headers.etag, 'the same ETag')
  t.equal(second.headers['x-block-height'], first.headers['x-block-height'])
  t.equal(second.body, first.body, 'the same bytes')
  t.equal(sim.count(EPOCH_INFO_PATH), 1, 'the chain asked once for the pool')
  const third = await b.app.inject({ method: 'GET', url: '/v1/epochs/latest' })
  t.equal(third.headers['x-cache'], 'hit', 'then kept in B\'s own cache')

  const scrape = await b.metrics?.scrape() ?? ''
  t.match(scrape, /edge_api_shared_answers_total\{result="hit"\} 1\b/)
  t.match(scrape, /edge_api_shared_store_up 1\b/)
  t.match(scrape, /edge_api_shared_operations_total\{operation="get",result="ok"\} [1-9]/)
  t.match(scrape, /edge_api_cache_requests_total\{route="\/v1\/epochs\/[^"]+",result="shared"\} 1\b/)
  t.match(await a.metrics?.scrape() ?? '', /edge_api_shared_heads_total\{result="published"\} [1-9]/, 'A published the head its node confirmed')

  // A 404 is not shared: its claim is released, and B's miss of the same key claims it at once.
  const absent = await a.app.inject({ method: 'GET', url: '/v1/participants/gonka1unknown' })
  t.equal(absent.statusCode, 404)
  await until(async () => /edge_api_shared_operations_total\{operation="release",result="ok"\} 1\b/.test(await a.metrics?.scrape() ?? ''), 'A released its claim')
  t.equal((await b.app.inject({ method: 'GET', url: '/v1/participants/gonka1unknown' })).statusCode, 404)
  t.match(await b.metrics?.scrape() ?? '', /edge_api_shared_answers_total\{result="claimed"\} 1\b/, 'B claimed it: no wait on a build that will not be shared')
})

t.test('with no answer cache (EDGE_API_CACHE_SIZE=0) heads are still shared, answers are not', async (t) => {
  if (!requireTool(t, 'redis-server', 'the shared tier\'s wiring test')) return
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.stop() })
  const a = await buildTestApp(t, { env: { EDGE_API_REDIS_URL: redis.url } })
  await until(() => a.logs.some((l) => l.msg?.startsWith('shared store up') === true), 'the store up')
  const answer = await a.app.inject({ method: 'GET', url: '/v1/epochs/latest' })
  t.equal(answer.statusCode, 200)
  t.equal(answer.headers['x-cache'], undefined)
  t.same(await (await redis.admin()).keys('edge-api:2:*:answer:*'), [])
})

t.test('the store gone: edge_api_shared_store_up 0 and the read answered on the replica\'s own', async (t) => {
  if (!requireTool(t, 'redis-server', 'the shared tier\'s wiring test')) return
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.stop() })
  const a = await buildTestApp(t, { env: { EDGE_API_REDIS_URL: redis.url, EDGE_API_CACHE_SIZE: '64MiB' } })
  await until(() => a.logs.some((l) => l.msg?.startsWith('shared store up') === true), 'the store up')
  t.match(await a.metrics?.scrape() ?? '', /edge_api_shared_store_up 1\b/)
  await redis.stop()
  await until(() => a.logs.some((l) => l.msg?.startsWith('shared store down') === true), 'the store down')
  t.match(await a.metrics?.scrape() ?? '', /edge_api_shared_store_up 0\b/, 'the gauge says so')
  const answer = await a.app.inject({ method: 'GET', url: '/v1/epochs/latest' })
  t.equal(answer.statusCode, 200, 'and the read is answered all the same')
})

t.test('a replica whose node does not name its network yet shares no answer, and asks again until it does', async (t) => {
  if (!requireTool(t, 'redis-server', 'the shared tier\'s wiring test')) return
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.stop() })
  const sim = await startChainSimulator()
  t.teardown(async () => { await sim.close() })
  sim.override(NODE_INFO_PATH, { default_node_info: {} })
  const a = await buildTestApp(t, { sim, env: { EDGE_API_REDIS_URL: redis.url, EDGE_API_CACHE_SIZE: '64MiB' } })
  await until(() => a.logs.some((l) => l.msg?.startsWith('shared subscription up') === true), 'the subscription up')
  await until(() => sim.count(NODE_INFO_PATH) >= 2, 'node_info asked again')
  const first = await a.app.inject({ method: 'GET', url: '/v1/epochs/latest' })
  t.equal(first.headers['x-cache'], 'miss')
  t.match(await a.metrics?.scrape() ?? '', /edge_api_shared_answers_total\{result="unavailable"\} 1\b/, 'not looked up in the store: the network is not known')
  t.same(await (await redis.admin()).keys('edge-api:2:*'), [], 'nor shared')
  sim.clearFaults()
  await until(() => a.logs.some((l) => l.msg?.startsWith('shared answers named') === true && l.network === 'gonka-mainnet'), 'the network known once the node names it', { timeoutMs: 5000 })
})

/** The tier opened on its own, over a chain whose node_info `nodeInfo` answers, on a clock the test moves. */
async function tierOver (t: Test, nodeInfo: () => Promise<unknown>, shareAnswers = true) {
  const redis = await RedisServer.start()
  t.teardown(async () => { await redis.stop() })
  const clock = new ManualClock()
  let asked = 0
  const heads = new ChainHeads({ nodeCount: 1, maxLag: 2, maxAgeMs: 1000, poll: async () => {}, log: undefined, urls: ['http://node'], clock })
  const silent = { info () {}, warn () {}, error () {} }
  const chain = { get: async () => { asked++; return await nodeInfo() } }
  const options = { url: redis.url, password: undefined, secret: undefined, maxLag: 2, heads, format: 'test', log: silent as never, metrics: undefined }
  const tier = await openSharedTier({ ...options, shareAnswers, clock, chain })
  t.teardown(async () => { await tier.close() })
  return { tier, clock, heads, redis, asked: () => asked }
}

t.test('node_info is asked until it names the network, and no more once the tier is closed', async (t) => {
  if (!requireTool(t, 'redis-server', 'the shared tier\'s wiring test')) return
  const { tier, clock, asked } = await tierOver(t, async () => { throw new Error('node down') })
  await until(() => asked() === 1, 'asked at once')
  await clock.advance(NETWORK_RETRY_MS)
  // Well within the real NETWORK_RETRY_MS: the retry is timed on the tier's clock.
  await until(() => asked() === 2, 'asked again after NETWORK_RETRY_MS', { timeoutMs: NETWORK_RETRY_MS / 2 })
  await tier.close()
  await clock.advance(NETWORK_RETRY_MS * 3)
  t.equal(asked(), 2, 'a closed tier asks the chain nothing')
})

t.test('without answers to share (no answer cache) the network is asked all the same: the heads\' channel is named by it', async (t) => {
  if (!requireTool(t, 'redis-server', 'the shared tier\'s wiring test')) return
  const { tier, asked } = await tierOver(t, async () => ({ default_node_info: { network: 'gonka-mainnet' } }), false)
  t.equal(tier.answers, undefined)
  await until(() => tier.network() === 'gonka-mainnet', 'the network known')
  t.equal(asked(), 1)
  t.ok(tier.hints(), 'the pool\'s heads followed')
})

t.test('no heads heard or published before the network is known, and none of another chain\'s pool', async (t) => {
  if (!requireTool(t, 'redis-server', 'the shared tier\'s wiring test')) return
  const networks: Array<string | undefined> = [undefined, 'gonka-testnet']
  const { tier, clock } = await tierOver(t, async () => ({ default_node_info: { network: networks.shift() } }))
  t.equal(tier.network(), undefined)
  t.equal(tier.hints(), undefined, 'no channel to hear or publish on yet')
  await until(() => clock.pending > 0, 'the next ask armed')
  await clock.advance(NETWORK_RETRY_MS)
  await until(() => tier.network() === 'gonka-testnet', 'the network named')
  t.equal(headsChannel('gonka-testnet') === headsChannel('gonka-mainnet'), false, 'each chain\'s pool a channel of its own')
})

t.test('without metrics (EDGE_API_METRICS_PORT=off) a shared lookup is answered all the same', async (t) => {
  if (!requireTool(t, 'redis-server', 'the shared tier\'s wiring test')) return
  const { tier } = await tierOver(t, async () => ({ default_node_info: { network: 'gonka-mainnet' } }))
  t.equal(await tier.answers?.find('/v1/epochs/latest {} @5'), undefined, 'a miss, not an error')
})

t.test('without metrics (EDGE_API_METRICS_PORT=off) this replica\'s new head is published to the pool all the same', async (t) => {
  if (!requireTool(t, 'redis-server', 'the shared tier\'s wiring test')) return
  const { tier, heads, redis } = await tierOver(t, async () => ({ default_node_info: { network: 'gonka-mainnet' } }))
  await until(() => tier.store.state === 'up' && tier.network() !== undefined, 'the store up, the network known')
  const heard: string[] = []
  const listener = (await redis.admin()).duplicate()
  listener.on('error', () => {})
  await listener.connect()
  t.teardown(() => listener.destroy())
  await listener.subscribe(headsChannel('gonka-mainnet'), (message) => { heard.push(message) })
  heads.observe(0, 100, 'poll')
  await until(() => heard.length > 0, 'the head published')
  t.match(heard[0], /^100 /)
})

t.test('a node_info naming the network with an empty string names nothing: asked again (answers of chains whose nodes all said \'\' would be shared)', async (t) => {
  if (!requireTool(t, 'redis-server', 'the shared tier\'s wiring test')) return
  const networks = ['', 'gonka-mainnet']
  const { clock, asked } = await tierOver(t, async () => ({ default_node_info: { network: networks.shift() } }))
  await until(() => asked() === 1, 'asked at once')
  await clock.advance(NETWORK_RETRY_MS)
  await until(() => asked() === 2, 'asked again', { timeoutMs: NETWORK_RETRY_MS / 2 })
})
