import { existsSync } from 'node:fs'
import t, { type Test } from 'tap'
import { Agent, request } from 'undici'
import { startChainSimulator, type ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { Router } from '../../harness/haproxy.js'
import { DIST_MAIN, Replica } from '../../harness/replica.js'
import { composeClientLimits } from '../../harness/router-config.js'
import { freePorts } from '../../harness/ports.js'
import { until } from '../../harness/wait.js'
import { requireTool } from '../fixtures/deploy/tools.js'
import { openSse } from '../fixtures/sse-client.js'

// The router's waiting lane over real HAProxy (the one template) and two real replicas
// (`node dist/main.js`) on a chain simulator whose blocks the test makes: it takes only what a
// replica holds, bounded as the pool is (review D3: `?afterHeight=0` on any route was served
// through it, around the pool's slots and busy rules: 1,759 x 200 where plain reads got none).

t.setTimeout(180_000)

const SLOTS = { EDGE_API_ROUTER_SERVER_MAXCONN: '2', EDGE_API_ROUTER_INIT_STATE: 'off' }

interface Pool { readonly sim: ChainSimulator, readonly replicas: string[], router (t: Test, settings: Record<string, string>): Promise<Router> }

async function startPool (t: Test): Promise<Pool | undefined> {
  if (!requireTool(t, 'haproxy', 'the router\'s waiting lane')) return undefined
  if (!existsSync(DIST_MAIN)) {
    t.fail(`${DIST_MAIN} is missing: run npm run build (npm test does it first)`)
    return undefined
  }
  const sim = await startChainSimulator()
  const ports = await freePorts(2)
  const replicas = ports.map((port) => new Replica({ port, chainUrl: sim.url, announce: '0', budget: '5s', env: { EDGE_API_CACHE_SIZE: '64MiB', EDGE_API_LOG_LEVEL: 'info' } }))
  t.teardown(async () => {
    await Promise.all(replicas.map(async (r) => r.stop()))
    await sim.close()
  })
  await Promise.all(replicas.map(async (r) => r.listening()))
  const servers = replicas.map((r) => `127.0.0.1:${r.port}`)
  return {
    sim,
    replicas: servers,
    router: async (t, settings) => {
      const [port, metricsPort] = await freePorts(2) as [number, number]
      const router = new Router(servers, port, metricsPort, settings)
      t.teardown(() => router.stop())
      await router.allUp(servers.length)
      return router
    }
  }
}

/** Requests a backend's servers have taken so far (`show stat` stot of its BACKEND row). */
async function taken (router: Router, backend: string): Promise<number> {
  return Number((await router.stat(backend)).find((row) => row.svname === 'BACKEND')?.stot)
}

/** `connections` closed loops from one client address for `ms`: how many answers of each status (or "error"). */
async function closedLoop (url: string, options: { connections: number, from: string, ms: number }): Promise<Map<string, number>> {
  const agent = new Agent({ connections: options.connections, localAddress: options.from })
  const counts = new Map<string, number>()
  const deadline = performance.now() + options.ms
  await Promise.all(Array.from({ length: options.connections }, async () => {
    while (performance.now() < deadline) {
      const status = await request(url, { dispatcher: agent }).then(async (res) => { await res.body.dump(); return String(res.statusCode) }, () => 'error')
      counts.set(status, (counts.get(status) ?? 0) + 1)
    }
  }))
  await agent.close()
  return counts
}

const answered = (counts: Map<string, number>): number => counts.get('200') ?? 0
const total = (counts: Map<string, number>): number => [...counts.values()].reduce((a, b) => a + b, 0)

/** The height the pool answers at now, asked from `from` (a client of its own). */
async function headHeight (router: Router, from: string): Promise<number> {
  const agent = new Agent({ localAddress: from })
  const res = await request(`${router.url}/v1/epochs/latest`, { dispatcher: agent })
  await res.body.dump()
  await agent.close()
  if (res.statusCode !== 200) throw new Error(`the head: status ${res.statusCode}`)
  return Number(res.headers['x-block-height'])
}

t.test('the waiting lane', async (t) => {
  const pool = await startPool(t)
  if (pool === undefined) return

  t.test('with 2 slots a replica and 64 connections, ?afterHeight=0 is shed like the plain read: the pool\'s slots and busy rules, never the waiting lane', async (t) => {
    const router = await pool.router(t, { ...SLOTS, ...composeClientLimits() })
    const path = `${router.url}/v1/participants`
    const plain = await closedLoop(path, { connections: 64, from: '127.0.0.2', ms: 2000 })
    const afterZero = await closedLoop(`${path}?afterHeight=0`, { connections: 64, from: '127.0.0.3', ms: 2000 })
    t.comment(`plain ${JSON.stringify([...plain])}, ?afterHeight=0 ${JSON.stringify([...afterZero])}`)
    t.equal(await taken(router, 'edge_api_waiting'), 0, 'the waiting lane took none of them')
    const servers = (await router.stat()).filter((row) => row.svname !== 'BACKEND')
    t.ok(servers.every((row) => Number(row.smax) <= 2), `no replica given more than its 2 slots (most at once: ${servers.map((r) => r.smax).join(', ')})`)
    // Before the fix: 0 x 200 plain, ~1,750 x 200 with ?afterHeight=0. A client this far over
    // its share is refused by the router's busy rule: both runs mostly refused, alike.
    t.ok(answered(afterZero) <= answered(plain) + 64, `?afterHeight=0 answered ${answered(afterZero)} times, plain ${answered(plain)}`)
    t.ok((afterZero.get('429') ?? 0) + (afterZero.get('503') ?? 0) >= total(afterZero) / 2, 'most of ?afterHeight=0 refused, as the plain read')
  })

  t.test('while the pool is saturated, a real long-poll and an event stream go through the waiting lane and are woken by a block', async (t) => {
    const router = await pool.router(t, { ...SLOTS, ...composeClientLimits() })
    const heavy = closedLoop(`${router.url}/v1/participants`, { connections: 64, from: '127.0.0.4', ms: 4000 })
    const height = await headHeight(router, '127.0.0.5')
    const poller = new Agent({ localAddress: '127.0.0.5' })
    t.teardown(() => poller.close())
    const longPoll = request(`${router.url}/v1/epochs/latest?afterHeight=${height}&wait=20`, { dispatcher: poller })
    const stream = await openSse(`${router.url}/v1/events`, {}, '127.0.0.5')
    t.teardown(() => stream.close())
    t.equal(stream.status, 200, 'the stream is open')
    await until(async () => Number((await router.stat('edge_api_waiting')).find((r) => r.svname === 'BACKEND')?.scur) === 2, 'the long-poll and the stream held in the waiting lane')
    pool.sim.clock.advance()
    const answer = await longPoll
    await answer.body.dump()
    t.equal(answer.statusCode, 200)
    t.ok(Number(answer.headers['x-block-height']) > height, `the long-poll answered above ${height}: ${answer.headers['x-block-height']}`)
    const head = await Promise.race([stream.next((e) => e.event === 'head' && Number(e.id) > height), new Promise((resolve) => setTimeout(resolve, 10_000, 'none in 10 s'))])
    t.not(head, 'none in 10 s', 'the stream carried the new head')
    t.equal(await taken(router, 'edge_api_waiting'), 2, 'the waiting lane took exactly those two')
    t.comment(`the heavy client meanwhile: ${JSON.stringify([...await heavy])}`)
  })

  t.test('a client over its per-client connection limit on the waiting lane is refused there too (a stream: 200 with retry:); its first connections are held', async (t) => {
    const limit = Number(composeClientLimits().EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS)
    const router = await pool.router(t, { ...SLOTS, ...composeClientLimits() })
    const height = await headHeight(router, '127.0.0.6')
    const agent = new Agent({ connections: limit + 5, localAddress: '127.0.0.6' })
    t.teardown(() => agent.close())
    const statuses: string[] = []
    const polls = Array.from({ length: limit + 5 }, async () => {
      const res = await request(`${router.url}/v1/participants?afterHeight=${height}&wait=20`, { dispatcher: agent }).catch(() => undefined)
      await res?.body.dump()
      statuses.push(String(res?.statusCode ?? 'error'))
    })
    // The 5 past the limit are refused (after the tarpit's second) while the others are held.
    await until(() => statuses.length >= 5, 'the connections past the limit answered', { timeoutMs: 15_000 })
    t.same(statuses, Array(5).fill('429'), '5 refused with 429')
    t.equal(await taken(router, 'edge_api_waiting'), limit, `${limit} held in the waiting lane, the refused never reached it`)
    // A stream it opens now is refused as one an EventSource comes back from: 200 with retry:, ended.
    const stream = await openSse(`${router.url}/v1/events`, {}, '127.0.0.6')
    t.equal(stream.status, 200, 'a stream past the limit: 200')
    t.match(stream.headers['content-type'], /^text\/event-stream/)
    const ended = await Promise.race([stream.ended.then(() => 'ended'), new Promise((resolve) => setTimeout(resolve, 5000, 'still open after 5 s'))])
    t.equal(ended, 'ended', 'and ended after the tarpit')
    t.same(stream.events, [{ retry: 10000 }], 'with retry: 10000 (the 429\'s Retry-After) and nothing else')
    t.equal(await taken(router, 'edge_api_waiting'), limit, 'never reaching the waiting lane')
    pool.sim.clock.advance()
    await Promise.all(polls)
    t.equal(statuses.filter((s) => s === '200').length, limit, `the ${limit} held answered at the new block`)
  })

  t.test('the waiting lane\'s slots are bounded: past them and the queue, the replicas\' 429 for too many waiting at once, a stream 200 with retry:', async (t) => {
    const router = await pool.router(t, { EDGE_API_ROUTER_INIT_STATE: 'off', EDGE_API_ROUTER_WAITING_MAXCONN: '2', EDGE_API_ROUTER_QUEUE_LENGTH: '2', EDGE_API_ROUTER_QUEUE_TIMEOUT_MS: '20000' })
    const height = await headHeight(router, '127.0.0.7')
    const agent = new Agent({ connections: 16 })
    t.teardown(() => agent.close())
    const ask = async (): Promise<{ status: number, retryAfter: unknown, ms: number }> => {
      const started = performance.now()
      const res = await request(`${router.url}/v1/epochs/latest?afterHeight=${height}&wait=20`, { dispatcher: agent })
      await res.body.dump()
      return { status: res.statusCode, retryAfter: res.headers['retry-after'], ms: performance.now() - started }
    }
    // 2 replicas x 2 slots held, 2 queued behind them. Waited for: all six taken by the lane,
    // wherever it put them; then where, asserted by name. Before the fix (no maxconn in the lane)
    // all six went to the replicas at once, three each, none queued.
    const held = Array.from({ length: 6 }, ask)
    const servers = async (): Promise<Array<Record<string, string>>> => (await router.stat('edge_api_waiting')).filter((row) => row.svname !== 'BACKEND' && row.svname !== 'FRONTEND')
    const onServers = async (): Promise<number[]> => (await servers()).map((row) => Number(row.scur))
    await until(async () => (await onServers()).reduce((a, b) => a + b, 0) + await router.queued('edge_api_waiting') === 6, 'the six long-polls taken by the waiting lane')
    t.same(await onServers(), [2, 2], 'each replica given its EDGE_API_ROUTER_WAITING_MAXCONN (2) held requests, no more')
    t.equal(await router.queued('edge_api_waiting'), 2, 'the other two queued in front of them')
    const refused = await ask()
    t.equal(refused.status, 429, 'the next one refused')
    t.equal(refused.retryAfter, '5')
    // Well under the queue's 20 s: refused at once, not after waiting (a bound far above the few ms it takes, for a loaded machine).
    t.ok(refused.ms < 5000, `in ${Math.round(refused.ms)} ms`)
    // A stream refused so is one an EventSource comes back from: 200, retry: and the end.
    const stream = await openSse(`${router.url}/v1/events`)
    t.equal(stream.status, 200, 'a stream past the bound: 200')
    t.match(stream.headers['content-type'], /^text\/event-stream/)
    const ended = await Promise.race([stream.ended.then(() => 'ended'), new Promise((resolve) => setTimeout(resolve, 5000, 'still open after 5 s'))])
    t.equal(ended, 'ended', 'and ended at once')
    t.same(stream.events, [{ retry: 5000 }], 'with retry: 5000 (the 429\'s Retry-After) and nothing else')
    pool.sim.clock.advance()
    t.same((await Promise.all(held)).map((r) => r.status), Array(6).fill(200), 'the held and the queued answered at the new block')
  })
})
