import { once } from 'node:events'
import { createServer } from 'node:http'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { writeFileSync } from 'node:fs'
import t from 'tap'
import { renderRouterConfig } from '../../harness/router-config.js'
import { freePorts } from '../../harness/ports.js'
import { until } from '../../harness/wait.js'
import { requireTool } from '../fixtures/deploy/tools.js'
import { runHaproxy } from '../fixtures/deploy/haproxy-process.js'

// The router's per-client connection limit on a real HAProxy, as render.sh writes it
// (compose/router/render.sh, EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS): a client's connections
// past its limit are its excess, each request on them refused 429, and past twice the limit a
// connection is closed as it opens, so one client's held refusals never fill the router's own
// slots. Another client is served throughout. The rendered-config test only reads the lines;
// this one fails when the reject line is taken out (a 429 then comes back on that connection).

const LIMIT = 2
const REQUEST = 'GET /v1/status HTTP/1.1\r\nHost: edge-api\r\n\r\n'
const STATUS = /^HTTP\/1\.1 (\d{3})/

/** A connection from `from` to the router, open. */
async function open (port: number, from: string): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port, localAddress: from })
  socket.on('error', () => {})
  await once(socket, 'connect')
  return socket
}

/** Sends one request on `socket`: the status line's code, or 'closed' when the router closes (or resets) it without a byte. */
async function ask (socket: Socket): Promise<number | 'closed'> {
  let text = ''
  socket.setEncoding('utf8')
  const answered = new Promise<void>((resolve) => {
    socket.on('data', (chunk: string) => {
      text += chunk
      if (STATUS.test(text)) resolve()
    })
    socket.on('close', () => { resolve() })
  })
  socket.write(REQUEST, () => {})
  const timer = setTimeout(() => { socket.destroy() }, 10_000)
  await answered
  clearTimeout(timer)
  const status = STATUS.exec(text)?.[1]
  return status === undefined ? 'closed' : Number(status)
}

/** A new connection from `from` asked one request: its status, or 'closed' when the router closes (or resets) it without a byte, at its opening or after. */
async function tryOnce (port: number, from: string): Promise<number | 'closed'> {
  const socket = connect({ host: '127.0.0.1', port, localAddress: from })
  let text = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => { text += chunk })
  socket.on('error', () => {})
  socket.on('connect', () => { socket.write(REQUEST, () => {}) })
  const timer = setTimeout(() => { socket.destroy() }, 10_000)
  // Not events.once: it rejects on the 'error' a reset brings before 'close'.
  await new Promise((resolve) => socket.on('close', resolve))
  clearTimeout(timer)
  const status = STATUS.exec(text)?.[1]
  return status === undefined ? 'closed' : Number(status)
}

t.test(`a client holding ${LIMIT} connections: its next ones get 429, past ${2 * LIMIT} they are closed as they open; another client is served`, async (t) => {
  if (!requireTool(t, 'haproxy', 'the router\'s per-client connection limit')) return
  const [routerPort, metricsPort] = await freePorts(2) as [number, number]
  // The replica: answers everything 200 (its readiness included), so the router's pool is up.
  const replica = createServer((_req, res) => { res.end('{}') })
  replica.listen(0, '127.0.0.1')
  await once(replica, 'listening')
  t.teardown(() => { replica.closeAllConnections(); replica.close() })
  const file = join(t.testdir(), 'haproxy.cfg')
  writeFileSync(file, renderRouterConfig({
    EDGE_API_ROUTER_SERVERS: `127.0.0.1:${(replica.address() as { port: number }).port}`,
    EDGE_API_ROUTER_ADDRESS: '127.0.0.1',
    EDGE_API_ROUTER_PORT: String(routerPort),
    EDGE_API_ROUTER_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
    EDGE_API_ROUTER_INIT_STATE: 'off',
    EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS: String(LIMIT)
  }))
  runHaproxy(t, file)
  await until(async () => fetch(`http://127.0.0.1:${routerPort}/v1/status`, { headers: { connection: 'close' } }).then((res) => res.status === 200, () => false),
    'the router serving through its replica', { timeoutMs: 20_000, intervalMs: 100 })

  // One connection at a time, each asked a request before the next opens: the router has
  // then accepted and counted it (with all opened first, a loaded machine's HAProxy could
  // accept them in any order across its threads, and count the first as the third).
  const sockets: Socket[] = []
  t.teardown(() => { for (const socket of sockets) socket.destroy() })
  const statuses: Array<number | 'closed'> = []
  for (let i = 0; i < 2 * LIMIT; i++) {
    const socket = await open(routerPort, '127.0.0.7')
    sockets.push(socket)
    statuses.push(await ask(socket))
  }
  const within = statuses.slice(0, LIMIT)
  const excess = statuses.slice(LIMIT)
  const closed = await tryOnce(routerPort, '127.0.0.7')
  const other = await open(routerPort, '127.0.0.8')
  sockets.push(other)
  t.same(within, [200, 200], 'the connections within the limit are served')
  t.same(excess, [429, 429], 'the connections past the limit: their requests refused 429')
  t.equal(closed, 'closed', 'a connection past twice the limit is closed as it opens, without an answer')
  t.equal(await ask(other), 200, 'another client is served')
})
