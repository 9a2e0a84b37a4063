import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { Agent, request } from 'undici'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { startService, type Service } from '../../src/service.js'
import { CACHE_OFF } from '../../harness/cache-off.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { LogLines } from '../../harness/log-lines.js'
import { redisFor } from '../fixtures/redis.js'
import { PoolRateCounter } from '../../src/shared/rate-counter.js'
import { SharedStore } from '../../src/shared/store.js'
import { until } from '../../harness/wait.js'

// EDGE_API_RATE_LIMIT across a pool: three replicas (the service as main.ts starts it, on real
// sockets) sharing one real redis-server; clients from distinct loopback addresses.

const WHY = 'the pool\'s rate limit'

interface Replica { readonly service: Service, readonly log: LogLines }

async function replicas (t: Test, limit: string, redisUrl: string | undefined, metricsPort?: number): Promise<Replica[]> {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const env = { CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_METRICS_PORT: 'off', EDGE_API_LOG_LEVEL: 'warn', EDGE_API_RATE_LIMIT: limit, EDGE_API_REDIS_TIMEOUT: '250ms', ...CACHE_OFF, ...(redisUrl === undefined ? {} : { EDGE_API_REDIS_URL: redisUrl }) }
  return await Promise.all([1, 2, 3].map(async () => {
    const log = new LogLines()
    const config = loadConfig(env)
    // No CPU shedding: a loaded test machine would shed what this test counts.
    const service = await startService({ config, metricsPort, logger: createLogger(config.logLevel, log.stream), loadShedding: { maxEventLoopUtilization: 0, maxEventLoopDelay: 0 } })
    t.teardown(() => service.close())
    if (redisUrl !== undefined) await until(() => service.shared?.store.state === 'up', 'the store up')
    return { service, log }
  }))
}

/** A client at `address` (127.0.0.x): one connection, its own source address. */
function client (t: Test, address: string) {
  const agent = new Agent({ connections: 1, localAddress: address })
  t.teardown(() => agent.close())
  return async (replica: Replica, path = '/v1/epochs/latest') => {
    const res = await request(`http://127.0.0.1:${replica.service.port}${path}`, { dispatcher: agent })
    const body = await res.body.text()
    if (res.statusCode !== 200 && res.statusCode !== 429) t.comment(`${res.statusCode} ${body}`)
    return { status: res.statusCode, retryAfter: res.headers['retry-after'], rateLimit: res.headers.ratelimit }
  }
}

t.test('a client over its limit on one replica is over it on all; another client is not', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  // The store's deadline at 250 ms (below): on a loaded test machine 10 ms is the CPU's, and each
  // miss would be an outage of its own.
  const pool = await replicas(t, '4/1m', redis.url, 0)
  const alone = (): number => pool.reduce((n, r) => n + r.log.lines.filter((l) => l.msg.startsWith('rate limit counted by this replica alone')).length, 0)
  // The property is the pool's count while the store answers in time: a count past the store's
  // deadline (a loaded machine) is counted locally, by design; then the round is tried again
  // with a fresh client, at most three times.
  for (const address of ['127.0.0.2', '127.0.0.4', '127.0.0.5']) {
    const before = alone()
    const heavy = client(t, address)
    const statuses: number[] = []
    const started = performance.now()
    for (let i = 0; i < 4; i++) statuses.push((await heavy(pool[i % 3] as Replica)).status)
    const refusals = []
    for (const replica of pool) refusals.push(await heavy(replica))
    if (alone() > before) {
      t.comment(`${address}: the store missed a deadline, counted alone; again`)
      continue
    }
    t.same(statuses, [200, 200, 200, 200], 'its 4 across the three replicas')
    for (const [i, res] of refusals.entries()) {
      t.equal(res.status, 429, `replica ${i + 1} refuses it too`)
      // The next token comes 15 s after the first was taken: less the seconds the round took (a loaded machine's are several).
      const least = 14 - Math.ceil((performance.now() - started) / 1000)
      t.ok(Number(res.retryAfter) >= least && Number(res.retryAfter) <= 15, `Retry-After ${String(res.retryAfter)}: one token every 15 s (at least ${least} left)`)
    }
    const polite = client(t, '127.0.0.3')
    for (const replica of pool) t.equal((await polite(replica)).status, 200, 'another client is served')
    t.equal((await heavy(pool[0] as Replica, '/healthz')).status, 200, '/healthz is never limited')
    const buckets = await (await redis.admin()).keys('edge-api:2:rate:gonka-mainnet:*')
    t.ok(buckets.length >= 2, `the buckets under edge-api's own prefix, versioned, named by the chain's network (a store shared with other apps and other chains): ${buckets.join(', ')}`)
    t.match(await pool[0]!.service.metrics!.scrape(), /^edge_api_shared_operations_total\{operation="count",result="ok"\} [1-9]/m, 'the counts are the store\'s `count` commands in its metrics')
    return
  }
  t.fail('the store missed a deadline in each of three rounds')
})

t.test('the pool\'s fields as draft-10 says: 3/1s, the first request r=2;t=1 (it said r=1: the Lua rounded the time up before dividing)', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const pool = await replicas(t, '3/1s', redis.url)
  // A fresh client per round: a round the store missed (counted locally, a loaded machine) is tried again.
  for (const address of ['127.0.0.6', '127.0.0.7', '127.0.0.8']) {
    const before = pool.reduce((n, r) => n + r.log.lines.filter((l) => l.msg.startsWith('rate limit counted by this replica alone')).length, 0)
    const first = await client(t, address)(pool[0] as Replica)
    if (pool.reduce((n, r) => n + r.log.lines.filter((l) => l.msg.startsWith('rate limit counted by this replica alone')).length, 0) > before) continue
    t.same(first, { status: 200, retryAfter: undefined, rateLimit: '"default";r=2;t=1' }, 'counted by the store\'s GCRA')
    return
  }
  t.fail('the store missed a deadline in each of three rounds')
})

t.test('the buckets are named by the chain\'s network: two chains\' pools on one store count a client apart; before the network is known, nothing is counted there', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const store = await SharedStore.open({ url: redis.url, log: { info () {}, warn () {} }, commandTimeoutMs: 1000 })
  t.teardown(() => store.close())
  await until(() => store.state === 'up', 'the store up')
  const known: { network?: string } = {}
  const mainnet = new PoolRateCounter(store, () => known.network)
  const testnet = new PoolRateCounter(store, () => 'gonka-testnet')
  // One request a minute, a bucket of one.
  t.equal(await mainnet.take('198.51.100.7', 60_000, 60_000), undefined, 'the network not known yet: counted by the replica alone')
  t.same(await (await redis.admin()).keys('*'), [], 'no command sent')
  known.network = 'gonka-mainnet'
  t.match(await mainnet.take('198.51.100.7', 60_000, 60_000), { taken: true, remaining: 0 })
  t.match(await mainnet.take('198.51.100.7', 60_000, 60_000), { taken: false }, 'its one request spent on mainnet')
  t.match(await testnet.take('198.51.100.7', 60_000, 60_000), { taken: true }, 'and still there on testnet: a bucket of its own')
  t.same((await (await redis.admin()).keys('edge-api:2:rate:*')).sort(), ['edge-api:2:rate:gonka-mainnet:198.51.100.7', 'edge-api:2:rate:gonka-testnet:198.51.100.7'])
})

t.test('without the store each replica counts alone (what the store is for)', async (t) => {
  const pool = await replicas(t, '4/1m', undefined)
  const heavy = client(t, '127.0.0.2')
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) statuses.push((await heavy(pool[i % 3] as Replica)).status)
  t.same(statuses, [200, 200, 200, 200, 200, 200], '6 served where the pool allows 4')
})

t.test('the store killed, restarted, frozen and thawed under load: 0 failed requests, counted locally meanwhile', async (t) => {
  const redis = await redisFor(t, WHY)
  if (redis === undefined) return
  const pool = await replicas(t, '1000000/1m', redis.url)
  const clients = ['127.0.0.2', '127.0.0.3', '127.0.0.4'].map((address) => client(t, address))
  const state = { running: true }
  const failures: string[] = []
  let served = 0
  const load = Promise.all(clients.map(async (ask, c) => {
    for (let i = c; state.running; i++) {
      const res = await ask(pool[i % 3] as Replica).catch((err: Error) => ({ status: 0, retryAfter: err.message, rateLimit: undefined }))
      if (res.status !== 200 || res.rateLimit === undefined) failures.push(`${res.status} ${String(res.retryAfter)}`)
      else served++
      // Paced: a request every ~10 ms from each client meets every phase below many times over;
      // back to back, three closed loops kept both cores busy for the whole test (issue 54).
      await sleep(10)
    }
  }))
  await sleep(300)
  await redis.kill()
  await sleep(600)
  await redis.restart()
  await until(() => pool.every((r) => r.service.shared?.store.state === 'up'), 'the store up again', { timeoutMs: 5000 })
  await sleep(300)
  // Frozen four times the store's deadline (EDGE_API_REDIS_TIMEOUT 250ms): each request meanwhile waits it out.
  redis.freeze()
  await sleep(1000)
  redis.thaw()
  await sleep(300)
  state.running = false
  await load
  // Served throughout (three clients a request each ~10 ms over ~2.5 s; a loaded machine serves fewer): what is asserted is that none failed.
  t.ok(served > 30, `requests kept being served (${served})`)
  t.same(failures, [], 'none failed')
  for (const [i, replica] of pool.entries()) {
    const alone = replica.log.lines.filter((l) => l.msg.startsWith('rate limit counted by this replica alone')).length
    t.ok(alone >= 1 && alone <= 3, `replica ${i + 1}: one warning per outage (${alone})`)
  }
})
