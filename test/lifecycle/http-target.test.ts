import { once } from 'node:events'
import { setTimeout as delay } from 'node:timers/promises'
import { connect } from 'node:net'
import t, { type Test } from 'tap'
import { Client } from 'undici'
import { httpDrainTarget } from '../../src/lifecycle/http-target.js'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { startListeningApp } from '../fixtures/listening-app.js'
import { until } from '../../harness/wait.js'

const ONE = '/productscience/inference/inference/inference_participant/'
const ADDRESS = PARTICIPANTS[1].address

/** A keep-alive HTTP/1.1 client on one socket (like the router's reused connections). */
function keepAliveClient (t: Test, origin: string): Client {
  const client = new Client(origin, { keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000, pipelining: 1 })
  t.teardown(() => client.destroy())
  return client
}

async function get (client: Client, path: string) {
  const res = await client.request({ path, method: 'GET' })
  const body = await res.body.text()
  return { status: res.statusCode, headers: res.headers, body, at: performance.now() }
}

/**
 * GET on a /v1 route, again while it sheds load (503 + Retry-After from admission's load
 * shedding, which trips on a busy test machine); a balancer's client would do the same. Bounded.
 */
async function getV1 (client: Client, path: string) {
  for (let attempt = 0; ; attempt++) {
    const res = await get(client, path)
    if (res.status !== 503 || res.headers['retry-after'] === undefined || attempt === 50) return res
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Resolves with the error code of a fresh TCP connection attempt, or 'connected'. */
function tryConnect (port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve('connected') })
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'))
  })
}

t.test('announce window: unready at once, still serving; then close, in-flight 200, prompt exit', async (t) => {
  const { sim, drain, origin, port, logs, waitForLog, app } = await startListeningApp(t, { announceMs: 1000, budgetMs: 10_000 })
  t.equal(app.server.keepAliveTimeout, 75_000, 'keepAliveTimeout far larger than the drain takes')

  const idle = keepAliveClient(t, origin)
  t.equal((await get(idle, '/healthz')).status, 200, 'an idle keep-alive socket is open')
  const idleClosed = once(idle, 'disconnect')
  const checker = keepAliveClient(t, origin)
  const before = await get(checker, '/readyz')
  t.equal(before.status, 200)
  t.equal(before.headers.connection, 'keep-alive', 'keep-alive before the latch')

  sim.latency(1500, ONE)
  const slowClient = keepAliveClient(t, origin)
  const slow = getV1(slowClient, `/v1/participants/${ADDRESS}`)
  await until(() => sim.count(ONE) === 1, 'the slow request to reach the chain')

  drain.signal('SIGTERM')
  const unready = await get(checker, '/readyz')
  t.equal(unready.status, 503, '/readyz is 503 at once')
  t.same(JSON.parse(unready.body), { status: 'not ready', reason: 'draining' })
  t.equal(unready.headers['cache-control'], 'no-store')
  t.equal(unready.headers.connection, 'close', 'the reused connection is told to move off')

  const fresh = keepAliveClient(t, origin)
  const other = await getV1(fresh, '/v1/participants')
  t.equal(other.status, 200, 'a new connection during the window is served')
  t.equal(other.headers.connection, 'close')
  t.equal((await get(keepAliveClient(t, origin), '/healthz')).status, 200, '/healthz stays 200 while draining')
  t.equal(drain.state, 'announcing')

  await waitForLog('listener closed')
  t.equal(await tryConnect(port), 'ECONNREFUSED', 'no new connections once the listener closed')
  await idleClosed
  t.pass('the idle keep-alive socket was closed with the listener')

  const answered = await slow
  t.equal(answered.status, 200, 'the in-flight slow request survived the window and the close')
  t.equal(answered.headers.connection, 'close')
  t.match(JSON.parse(answered.body), { denom: 'ngonka' })

  const outcome = await drain.outcome
  const exitAt = performance.now()
  t.equal(outcome.code, 0)
  const afterLast = exitAt - answered.at
  t.ok(afterLast < 200, `exit ${Math.round(afterLast)} ms after the last response (keepAliveTimeout 75 s)`)
  const msgs = logs.map((l) => l.msg).filter((m) => ['shutdown signal', 'announcing drain', 'listener closed', 'drained'].includes(m as string))
  t.same(msgs, ['shutdown signal', 'announcing drain', 'listener closed', 'drained'])
  t.equal(sim.count('/cosmos/base/tendermint/v1beta1/node_info'), 1, '/readyz while draining never probed the chain')
})

t.test('a request completing on an open connection after the close gets 503 + Connection: close', async (t) => {
  const { drain, port, waitForLog } = await startListeningApp(t, { announceMs: 0, budgetMs: 10_000 })
  const socket = connect(port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  await once(socket, 'connect')
  // Half a request: the connection is busy, so the close does not reap it.
  socket.write('GET /v1/status HTTP/1.1\r\nHost: edge\r\n')
  await new Promise((resolve) => setImmediate(resolve))
  drain.signal('SIGTERM')
  await waitForLog('listener closed')
  let answer = ''
  socket.setEncoding('utf8').on('data', (chunk: string) => { answer += chunk })
  socket.write('\r\n')
  await once(socket, 'end')
  t.match(answer, /^HTTP\/1\.1 503 /, '503')
  t.match(answer, /\r\nconnection: close\r\n/i, 'Connection: close')
  t.equal((await drain.outcome).code, 0, 'and the drain completes cleanly')
})

t.test('budget expiry aborts the chain request, destroys the socket and exits 1 at the budget', async (t) => {
  const { sim, chain, drain, origin } = await startListeningApp(t, { announceMs: 0, budgetMs: 300 })
  sim.hang(ONE)
  const client = keepAliveClient(t, origin)
  const stuck = getV1(client, `/v1/participants/${ADDRESS}`).then(() => 'answered', (err: Error) => err.name)
  await until(() => sim.count(ONE) === 1, 'the request to reach the chain')
  const start = performance.now()
  drain.signal('SIGTERM')
  const outcome = await drain.outcome
  const took = performance.now() - start
  t.same({ code: outcome.code, reason: outcome.reason }, { code: 1, reason: 'shutdown budget 300ms expired' })
  t.ok(took >= 290 && took < 500, `forced at ${Math.round(took)} ms (budget 300 ms)`)
  await until(() => chain.inFlight === 0, 'the chain request to be aborted')
  t.pass('the chain request was aborted')
  t.equal(await stuck, 'SocketError', 'the client socket was destroyed')
})

t.test('a second signal during the shutdown forces the close at once', async (t) => {
  const { sim, drain, origin, waitForLog } = await startListeningApp(t, { announceMs: 0, budgetMs: 600_000 })
  sim.hang(ONE)
  const stuck = getV1(keepAliveClient(t, origin), `/v1/participants/${ADDRESS}`).then(() => 'answered', (err: Error) => err.name)
  await until(() => sim.count(ONE) === 1, 'the request to reach the chain')
  drain.signal('SIGTERM')
  await waitForLog('listener closed')
  const start = performance.now()
  drain.signal('SIGTERM')
  const outcome = await drain.outcome
  t.same({ code: outcome.code, reason: outcome.reason }, { code: 1, reason: 'operator sent SIGTERM during shutdown' })
  t.ok(performance.now() - start < 100, 'at once')
  t.equal(await stuck, 'SocketError')
})

t.test('listenerClosed resolves only once the listener has really closed', async (t) => {
  const server = { listening: true, closeAllConnections: () => {} }
  let closeApp!: () => void
  const target = httpDrainTarget({
    app: { close: () => new Promise<void>((resolve) => { closeApp = resolve }), server } as never,
    readiness: { beginDrain: () => {} },
    chain: { abortAll: () => {} }
  })
  const { listenerClosed, finished } = target.close()
  let closed = false
  const settled = listenerClosed.then(() => { closed = true })
  await delay(50)
  t.notOk(closed, 'still pending while the server listens, however many turns pass')
  server.listening = false
  // The poll timer is unref'd (it never keeps a process alive), so this test holds a ref'd one.
  await Promise.race([settled, delay(2000)])
  t.ok(closed, 'resolved once the server stopped listening')
  closeApp()
  await finished
})

t.test('close() finishing means the listener is closed; close() failing rejects the wait', async (t) => {
  const listening = { listening: true, closeAllConnections: () => {} }
  const finishedFirst = httpDrainTarget({
    app: { close: async () => {}, server: listening } as never,
    readiness: { beginDrain: () => {} },
    chain: { abortAll: () => {} }
  }).close()
  await finishedFirst.listenerClosed
  t.pass('resolved by close() finishing')

  let closed = false
  const failing = httpDrainTarget({
    app: { close: async () => { throw new Error('preClose hook failed') }, server: listening } as never,
    readiness: { beginDrain: () => {} },
    chain: { abortAll: () => { closed = true } }
  })
  const { listenerClosed, finished } = failing.close()
  await t.rejects(listenerClosed, { message: 'preClose hook failed' }, 'never reported closed when it is not')
  await t.rejects(finished)
  failing.forceClose()
  t.ok(closed, 'forceClose aborts the chain requests')
})
