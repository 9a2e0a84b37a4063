import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import type { Metrics } from '../../src/metrics/registry.js'
import { buildTestApp, type TestApp } from '../fixtures/app.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import type { LogLine } from '../../harness/log-lines.js'
import { startMain } from '../../harness/main-process.js'
import { sampleValue } from '../../harness/prometheus.js'
import { until } from '../../harness/wait.js'

// Timeouts of about a second each, and node dist/main.js's own 15 s headersTimeout: the
// child's case, which mostly waits out those 15 s, comes first and runs beside the others.
t.setTimeout(120_000)
t.jobs = 2
const PARALLEL = { buffered: true }

interface Answer {
  readonly raw: string
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
  /** Whether the server closed the connection within the wait. */
  readonly closed: boolean
}

/** Writes raw bytes on a fresh connection and reads what comes back until the server closes it (or `maxMs`). */
async function exchange (port: number, send: string | ((socket: Socket) => void), maxMs = 5000): Promise<Answer> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let raw = ''
  socket.setEncoding('utf8').on('data', (chunk: string) => { raw += chunk })
  socket.on('error', () => {})
  if (typeof send === 'string') socket.write(send)
  else send(socket)
  let timer: NodeJS.Timeout | undefined
  const closed = await Promise.race([
    once(socket, 'close').then(() => true),
    new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), maxMs) })
  ])
  clearTimeout(timer)
  socket.destroy()
  return { ...parse(raw), raw, closed }
}

/** The last answer in `raw` (several when requests were pipelined). */
function parse (raw: string): { status: number, headers: Record<string, string>, body: string } {
  const start = raw.lastIndexOf('HTTP/1.1 ')
  const end = raw.indexOf('\r\n\r\n', start)
  if (start < 0 || end < 0) return { status: 0, headers: {}, body: '' }
  const [statusLine, ...lines] = raw.slice(start, end).split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim()
  return { status: Number(statusLine?.split(' ')[1]), headers, body: raw.slice(end + 4) }
}

const HEADERS_TIMEOUT = 1000
const REQUEST_TIMEOUT = 2000

async function listening (t: Test): Promise<TestApp & { port: number }> {
  const test = await buildTestApp(t, {
    env: { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' },
    serverTimeouts: { headersTimeout: HEADERS_TIMEOUT, requestTimeout: REQUEST_TIMEOUT }
  })
  await test.app.listen({ port: 0, host: '127.0.0.1' })
  return { ...test, port: (test.app.server.address() as { port: number }).port }
}

function accessLinesOf (logs: LogLine[], reqId: string): LogLine[] {
  return logs.filter((l) => l.msg === 'request' && l.reqId === reqId)
}

async function requestSamples (test: TestApp, labels: Record<string, string>): Promise<number | undefined> {
  return sampleValue(await (test.metrics as Metrics).scrape(), 'http_request_duration_seconds_count', labels)
}

/** The envelope, Connection: close, our request id; the server closed the connection. */
function assertRefusal (t: Test, answer: Answer, status: number, message: string): string {
  t.equal(answer.status, status, `${status}: ${answer.raw.slice(0, 80)}`)
  t.same(JSON.parse(answer.body), { message }, 'the {"message"} envelope')
  t.equal(answer.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(Number(answer.headers['content-length']), Buffer.byteLength(answer.body))
  t.equal(answer.headers.connection, 'close')
  t.ok(answer.closed, 'and the connection is closed')
  t.match(answer.headers['x-request-id'], /^r[0-9a-z]+$/)
  return answer.headers['x-request-id'] as string
}

t.test('node dist/main.js answers them the same way', PARALLEL, async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const main = startMain({ CHAIN_REST_URL: sim.url, EDGE_API_PORT: '0', EDGE_API_HOST: '127.0.0.1', EDGE_API_DRAIN_ANNOUNCE: '0' })
  t.teardown(() => main.child.kill('SIGKILL'))
  const port = await main.port()
  const [malformed, tooLarge, timedOut] = await Promise.all([
    exchange(port, 'BLAH /healthz HTTP/1.1\r\nHost: edge\r\n\r\n'),
    exchange(port, `GET /healthz HTTP/1.1\r\nHost: edge\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    // The deployed headersTimeout, 15 s.
    exchange(port, 'GET /healthz HTTP/1.1\r\nHost: edge\r\n', 30_000)
  ])
  const refusals: Array<[Answer, number, string]> = [
    [malformed, 400, 'malformed HTTP request: Invalid method encountered'],
    [tooLarge, 431, 'request headers larger than 16KiB'],
    [timedOut, 408, 'request headers not received within 15s']
  ]
  for (const [answer, status, message] of refusals) {
    const id = assertRefusal(t, answer, status, message)
    await until(() => accessLinesOf(main.lines, id).length > 0, `the access line of ${id}`)
    t.match(accessLinesOf(main.lines, id), [{ level: 30, method: null, route: null, status }])
  }
  main.child.kill('SIGTERM')
  t.equal((await main.exited).code, 0)
})

t.test("Node's own refusals before any request: the envelope, one access line, one metric sample", PARALLEL, async (t) => {
  const test = await listening(t)
  const { port, logs } = test
  const cases: Array<[string, string | ((socket: Socket) => void), number, string]> = [
    ['a malformed request line', 'BLAH /healthz HTTP/1.1\r\nHost: edge\r\n\r\n', 400, 'malformed HTTP request: Invalid method encountered'],
    ['a malformed header', 'GET /healthz HTTP/1.1\r\nHost edge\r\n\r\n', 400, 'malformed HTTP request: Invalid header token'],
    ['headers over 16 KiB', `GET /healthz HTTP/1.1\r\nHost: edge\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'request headers larger than 16KiB'],
    ['headers never finished', 'GET /healthz HTTP/1.1\r\nHost: edge\r\n', 408, 'request headers not received within 1s']
  ]
  const answers = await Promise.all(cases.map(async ([, send]) => exchange(port, send)))
  for (const [[what, , status, message], answer] of cases.map((c, i) => [c, answers[i] as Answer] as const)) {
    t.test(what, async (t) => {
      const id = assertRefusal(t, answer, status, message)
      const lines = accessLinesOf(logs, id)
      t.equal(lines.length, 1, 'one access line, under the id the answer carries')
      t.match(lines[0], { level: 30, method: null, route: null, status, ms: Number })
      t.match(logs.find((l) => l.reqId === id && l.msg === 'request refused by Node'), { level: 20, statusCode: status, reason: message }, 'the reason at debug')
    })
  }
  t.equal(new Set(answers.map((a) => a.headers['x-request-id'])).size, cases.length, 'each its own id')
  const headersLine = accessLinesOf(logs, answers[3]?.headers['x-request-id'] as string)[0] as LogLine
  t.ok((headersLine.ms as number) >= HEADERS_TIMEOUT - 50, `the 408 is timed from the connection's start: ${headersLine.ms as number} ms`)
  t.equal(await requestSamples(test, { method: 'unknown', route: 'clientError', status_code: '400' }), 2)
  t.equal(await requestSamples(test, { method: 'unknown', route: 'clientError', status_code: '431' }), 1)
  t.equal(await requestSamples(test, { method: 'unknown', route: 'clientError', status_code: '408' }), 1)
})

t.test('refusals of a request whose body is arriving answer for that request: its id, route and metric', PARALLEL, async (t) => {
  const test = await listening(t)
  const { port, logs } = test
  const head = (extra: string): string => `POST /v1/verify-proof HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\n${extra}\r\n`
  const [slow, badChunk, longExtension] = await Promise.all([
    // The body never completes: requestTimeout.
    exchange(port, `${head('Content-Length: 100\r\n')}{"a":`),
    exchange(port, `${head('Transfer-Encoding: chunked\r\n')}zz\r\n`),
    exchange(port, `${head('Transfer-Encoding: chunked\r\n')}1;${'x'.repeat(20_000)}\r\n`)
  ]) as [Answer, Answer, Answer]
  const cases: Array<[string, Answer, number, string]> = [
    ['a body not in within requestTimeout', slow, 408, 'request not received in full within 2s'],
    ['a malformed chunked body', badChunk, 400, 'malformed HTTP request: Invalid character in chunk size'],
    ['chunk extensions over the limit', longExtension, 413, 'chunk extensions too large']
  ]
  for (const [what, answer, status, message] of cases) {
    t.test(what, async (t) => {
      const id = assertRefusal(t, answer, status, message)
      const arrived = logs.find((l) => l.msg === 'incoming request' && l.reqId === id)
      t.match(arrived, { method: 'POST', url: '/v1/verify-proof' }, 'the id is the one the request arrived with')
      const lines = accessLinesOf(logs, id)
      t.equal(lines.length, 1, 'one access line')
      t.match(lines[0], { method: 'POST', route: '/v1/verify-proof', status })
    })
  }
  t.ok((accessLinesOf(logs, slow.headers['x-request-id'] as string)[0]?.ms as number) >= REQUEST_TIMEOUT - 50, 'timed from its arrival')
  for (const [, , status] of cases) {
    t.equal(await requestSamples(test, { method: 'POST', route: '/v1/verify-proof', status_code: String(status) }), 1, `${status} counted under its route`)
  }
  // A path no route has reads its body too, before its 404.
  const unrouted = await exchange(port, 'POST /v1/nope HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{')
  const id = assertRefusal(t, unrouted, 408, 'request not received in full within 2s')
  t.match(accessLinesOf(logs, id), [{ method: 'POST', route: null, status: 408 }])
  t.equal(await requestSamples(test, { method: 'POST', route: 'unmatched', status_code: '408' }), 1, 'counted as unmatched, as its 404 would have been')
  await until(async () => sampleValue(await (test.metrics as Metrics).scrape(), 'edge_api_requests_in_flight') === 0, 'no request left in flight')
})

t.test('a refusal after an answered request on the same connection comes after that answer', PARALLEL, async (t) => {
  const { port, logs } = await listening(t)
  const answer = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: edge\r\n\r\nBLAH / HTTP/1.1\r\n\r\n')
  t.match(answer.raw, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nokHTTP\/1\.1 400 Bad Request\r\n/, 'the 200, then the 400')
  assertRefusal(t, answer, 400, 'malformed HTTP request: Invalid method encountered')
  await until(() => logs.filter((l) => l.msg === 'request').length === 2, 'both access lines')
})

t.test("the body parser's refusals (413, 415) are in the envelope too, each with one access line", PARALLEL, async (t) => {
  const { port, logs } = await listening(t)
  const tooLarge = await exchange(port, 'POST /v1/verify-proof HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{')
  t.equal(tooLarge.status, 413)
  t.same(JSON.parse(tooLarge.body), { message: 'Request body is too large' })
  const unsupported = await exchange(port, 'POST /v1/verify-proof HTTP/1.1\r\nHost: edge\r\nContent-Type: text/xml\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab')
  t.equal(unsupported.status, 415)
  t.same(JSON.parse(unsupported.body), { message: 'Unsupported Media Type' })
  for (const [answer, status] of [[tooLarge, 413], [unsupported, 415]] as const) {
    t.match(accessLinesOf(logs, answer.headers['x-request-id'] as string), [{ route: '/v1/verify-proof', status }])
  }
})

t.test('an HTTP/1.1 request without Host is a 400 in the envelope, logged; HTTP/1.0 needs none', PARALLEL, async (t) => {
  const { port, logs } = await listening(t)
  const missing = await exchange(port, 'GET /healthz HTTP/1.1\r\n\r\n', 500)
  t.equal(missing.status, 400)
  t.same(JSON.parse(missing.body), { message: 'missing Host header (required in HTTP/1.1)' })
  t.match(accessLinesOf(logs, missing.headers['x-request-id'] as string), [{ method: 'GET', route: '/healthz', status: 400 }])
  const old = await exchange(port, 'GET /healthz HTTP/1.0\r\n\r\n')
  t.equal(old.status, 200)
  t.equal(old.body, 'ok')
})

t.test('a connection that failed (reset, socket error) or is gone is closed without an answer or a line', PARALLEL, async (t) => {
  const { app, port, logs } = await listening(t)
  const from = logs.length
  for (const err of [Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), new Error('no code')]) {
    const client = connect(port, '127.0.0.1')
    client.on('error', () => {})
    const [server] = await once(app.server, 'connection') as [Socket]
    let received = ''
    client.setEncoding('utf8').on('data', (chunk: string) => { received += chunk })
    app.server.emit('clientError', err, server)
    await once(client, 'close')
    t.equal(received, '', `${err.message}: nothing written`)
    t.ok(server.destroyed, 'the socket is closed')
  }
  const client = connect(port, '127.0.0.1')
  const [gone] = await once(app.server, 'connection') as [Socket]
  gone.destroy()
  app.server.emit('clientError', Object.assign(new Error('Parse Error'), { code: 'HPE_INVALID_METHOD', reason: 'Invalid method encountered' }), gone)
  client.destroy()
  t.same(logs.slice(from).filter((l) => l.msg === 'request'), [], 'no access line')
})
