import { createServer, type Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { Agent, request } from 'undici'
import { requireTool } from '../fixtures/deploy/tools.js'
import { Router } from '../../harness/haproxy.js'
import { freePorts } from '../../harness/ports.js'
import { until } from '../../harness/wait.js'
import { within } from '../../harness/deadline.js'

// The router's per-client limits (compose/router/render.sh), on real HAProxy rendered from
// the one template, clients from distinct loopback addresses. The replica is a stand-in that
// answers /readyz and echoes what reached it: what is tested is the router.

async function echoReplica (t: Test): Promise<Server> {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ forwardedFor: req.headers['x-forwarded-for'], realIp: req.headers['x-real-ip'], proto: req.headers['x-forwarded-proto'] }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return server
}

async function startRouter (t: Test, settings: Record<string, string>): Promise<Router | undefined> {
  if (!requireTool(t, 'haproxy', 'the router\'s per-client limits')) return undefined
  const replica = await echoReplica(t)
  const [port, metricsPort] = await freePorts(2) as [number, number]
  const address = replica.address() as { port: number }
  const router = new Router([`127.0.0.1:${address.port}`], port, metricsPort, { EDGE_API_ROUTER_INIT_STATE: 'off', ...settings })
  t.teardown(() => router.stop())
  await router.allUp(1)
  return router
}

function clientAt (t: Test, address: string) {
  const agent = new Agent({ connections: 1, localAddress: address })
  t.teardown(() => agent.close())
  return async (url: string, headers: Record<string, string> = {}) => {
    const res = await request(url, { dispatcher: agent, headers })
    return { status: res.statusCode, headers: res.headers, body: await res.body.json() as Record<string, unknown> }
  }
}

t.test('a client over its request rate is refused with a JSON 429 and Retry-After; another client is served', async (t) => {
  const router = await startRouter(t, { EDGE_API_ROUTER_CLIENT_MAX_REQUESTS: '20', EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS: '0' })
  if (router === undefined) return
  const heavy = clientAt(t, '127.0.0.2')
  const statuses: number[] = []
  for (let i = 0; i < 25; i++) statuses.push((await heavy(`${router.url}/v1/status`)).status)
  t.same(statuses, [...Array(20).fill(200), ...Array(5).fill(429)], '20 in 10 s, then refused')
  const asked = performance.now()
  const refused = await heavy(`${router.url}/v1/status`)
  t.equal(refused.status, 429)
  // Tarpitted: a client that asks again at once is slowed, not refused faster.
  t.ok(performance.now() - asked >= 900, `held ${Math.round(performance.now() - asked)} ms before its 429 (timeout tarpit 1s)`)
  t.equal(refused.headers['retry-after'], '10')
  t.match(refused.headers['content-type'], /^application\/json/)
  t.same(refused.body, { message: 'Too Many Requests' })
  t.equal((await clientAt(t, '127.0.0.3')(`${router.url}/v1/status`)).status, 200, 'another client is served')
})

t.test('a client opening more connections than allowed is refused on those past its limit, served on the others; another client is served', async (t) => {
  const router = await startRouter(t, { EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS: '5', EDGE_API_ROUTER_CLIENT_MAX_REQUESTS: '0' })
  if (router === undefined) return
  const port = Number(new URL(router.url).port)
  const open = async (address: string, count: number): Promise<Socket[]> => await Promise.all(Array.from({ length: count }, async () => {
    const socket = connect({ host: '127.0.0.1', port, localAddress: address })
    t.teardown(() => { socket.destroy() })
    await within(new Promise((resolve) => socket.once('connect', resolve)), `a connection from ${address}`)
    return socket
  }))
  const statusOf = async (socket: Socket): Promise<string> => {
    const answer = new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(String(chunk).split(' ')[1] as string)))
    socket.write('GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n')
    return await within(answer, 'the status line of an answer on a raw connection')
  }
  // Which two are past the limit is the order HAProxy's threads accepted them in.
  const heavy = await open('127.0.0.4', 7)
  const statuses = await Promise.all(heavy.map(statusOf))
  t.same(statuses.sort(), [...Array(5).fill('200'), ...Array(2).fill('429')], '7 open where 5 are allowed: the 2 past the limit refused, 5 served')
  t.same((await Promise.all(heavy.map(statusOf))).sort(), statuses, 'and again: a connection past the limit stays refused')
  const polite = await open('127.0.0.5', 3)
  t.same(await Promise.all(polite.map(statusOf)), Array(3).fill('200'), 'another client with 3 is served')
})

t.test('a client opening connections past twice its limit has them closed as they open: its held 429s never fill the router\'s slots', async (t) => {
  // The router's own slots (maxconn) 20; a client may hold 5 open, and 10 before it is cut off.
  const router = await startRouter(t, { EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS: '5', EDGE_API_ROUTER_CLIENT_MAX_REQUESTS: '0', EDGE_API_ROUTER_MAX_CONNECTIONS: '20' })
  if (router === undefined) return
  const port = Number(new URL(router.url).port)
  let closed = 0
  const heavy = Array.from({ length: 40 }, () => {
    const socket = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.6' })
    socket.on('error', () => {})
    socket.on('close', () => { closed++ })
    t.teardown(() => { socket.destroy() })
    return socket
  })
  await until(() => closed >= 30, 'the connections past twice the limit closed', { timeoutMs: 2000 }).catch(() => {})
  // The ones left are held open, idle: another client's connections still get the router's slots.
  const polite = clientAt(t, '127.0.0.7')
  const started = performance.now()
  const answer = await Promise.race([polite(`${router.url}/v1/status`).then((res) => res.status), sleep(2000).then(() => 'no answer within 2 s')])
  t.equal(answer, 200, `another client served (in ${Math.round(performance.now() - started)} ms)`)
  t.equal(closed, 30, `${closed} of ${heavy.length} closed by the router: all but 10`)
})

t.test('with both limits off (0) nobody is refused; the replica sees the real client, never a forged one', async (t) => {
  const router = await startRouter(t, { EDGE_API_ROUTER_CLIENT_MAX_REQUESTS: '0', EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS: '0' })
  if (router === undefined) return
  const client = clientAt(t, '127.0.0.6')
  for (let i = 0; i < 25; i++) {
    const res = await client(`${router.url}/v1/status`, { 'x-forwarded-for': '203.0.113.9', 'x-real-ip': '203.0.113.9' })
    if (res.status !== 200) t.fail(`request ${i}: ${res.status}`)
    if (i === 0) t.same(res.body, { forwardedFor: '127.0.0.6', realIp: '127.0.0.6', proto: 'http' }, 'the forged headers dropped; X-Real-IP and X-Forwarded-Proto as Go\'s router')
  }
})
