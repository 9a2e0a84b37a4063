import { once } from 'node:events'
import { connect } from 'node:net'
import t from 'tap'
import { SERVER_TIMEOUTS, serverTimeoutOptions } from '../../src/http/server-timeouts.js'
import { buildTestApp } from '../fixtures/app.js'

// Each case holds a socket open for seconds on purpose.
t.setTimeout(60_000)

t.test("the options go where Fastify 5 forwards them: its own keep-alive/request timeouts, Node's through http", async (t) => {
  t.same(serverTimeoutOptions(), {
    keepAliveTimeout: 75_000,
    requestTimeout: 30_000,
    http: { headersTimeout: 15_000, requestTimeout: 30_000, connectionsCheckingInterval: 500 }
  })
  t.same(serverTimeoutOptions({ headersTimeout: 1000 }).http.headersTimeout, 1000)
  t.equal(SERVER_TIMEOUTS.connectionsCheckingInterval, 500)
})

t.test('the running server has them (a top-level headersTimeout would have left Node\'s 60 s)', async (t) => {
  const { app } = await buildTestApp(t)
  t.equal(app.server.headersTimeout, 15_000)
  t.equal(app.server.requestTimeout, 30_000)
  t.equal(app.server.keepAliveTimeout, 75_000)
})

interface Drip {
  /** ms from connecting until the server closed the socket. */
  readonly closedAfterMs: number | undefined
  readonly answer: string
}

/**
 * A client on a real socket that sends a request line, then one header line every 200 ms and
 * never the blank line that ends the headers (slowloris). Gives up after `maxMs`.
 */
async function drip (port: number, maxMs: number): Promise<Drip> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const started = performance.now()
  let answer = ''
  socket.setEncoding('utf8').on('data', (chunk: string) => { answer += chunk })
  socket.on('error', () => {})
  socket.write('GET /healthz HTTP/1.1\r\nHost: edge\r\n')
  let n = 0
  const timer = setInterval(() => { if (!socket.destroyed) socket.write(`X-Drip-${++n}: y\r\n`) }, 200)
  const closed = once(socket, 'close').then(() => performance.now() - started)
  const gaveUp = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), maxMs))
  const closedAfterMs = await Promise.race([closed, gaveUp])
  clearInterval(timer)
  socket.destroy()
  return { closedAfterMs, answer }
}

t.test('a client dripping header lines is cut off with 408 within a second of headersTimeout', async (t) => {
  const HEADERS_TIMEOUT = 1000
  const { app } = await buildTestApp(t, { serverTimeouts: { headersTimeout: HEADERS_TIMEOUT } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const dripping = drip(port, 8000)
  // Meanwhile the server serves everyone else.
  const normal = await fetch(`http://127.0.0.1:${port}/healthz`)
  t.equal(normal.status, 200, 'a normal request is answered while the drip goes on')
  const { closedAfterMs, answer } = await dripping
  t.ok(closedAfterMs !== undefined, 'the server closed the socket')
  t.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/, 'with 408')
  const ms = closedAfterMs as number
  t.ok(ms >= HEADERS_TIMEOUT - 50, `not before headersTimeout (${Math.round(ms)} ms)`)
  // connectionsCheckingInterval 500 ms; the rest is margin for a loaded machine.
  t.ok(ms <= HEADERS_TIMEOUT + 1200, `within about a second of it: ${Math.round(ms)} ms for a ${HEADERS_TIMEOUT} ms headersTimeout`)
})

t.test("counter-test: with Node's default check interval (30 s) the same drip outlives headersTimeout by far", async (t) => {
  const { app } = await buildTestApp(t, { serverTimeouts: { headersTimeout: 1000, connectionsCheckingInterval: 30_000 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const { closedAfterMs, answer } = await drip(port, 3500)
  t.equal(closedAfterMs, undefined, 'still connected 3.5 s into a 1 s headersTimeout')
  t.equal(answer, '')
  // app.close() waits for this socket; end it here.
  app.server.closeAllConnections()
})
