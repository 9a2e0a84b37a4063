import t, { type Test } from 'tap'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { CLIENT, OtlpReceiver, SERVER } from '../fixtures/otlp-receiver.js'
import { startTracedService } from '../fixtures/traced-service.js'
import { until } from '../../harness/wait.js'

// Real sockets, a chain simulator and an OTLP receiver per case: slow on a busy machine.
t.setTimeout(180_000)

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const CLIENT_SPAN = '00f067aa0ba902b7'

/** A traced service over a fresh chain simulator, exporting to a fresh OTLP/HTTP receiver. */
async function tracedOverSimulator (t: Test) {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const receiver = await OtlpReceiver.http()
  t.teardown(() => receiver.close())
  return { sim, receiver, ...await startTracedService(t, [sim.url], receiver) }
}

t.test('a trace of /v1/epochs/current/participants: one server span, child of the client\'s, with its chain spans as children', async (t) => {
  const { sim, receiver, origin } = await tracedOverSimulator(t)
  sim.resetCounts()

  const res = await fetch(`${origin}/v1/epochs/current/participants?x=1`, { headers: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01`, 'x-request-id': 'trace-me' } })
  t.equal(res.status, 200)
  await res.arrayBuffer()
  const chainRequests = sim.requests.length
  t.ok(chainRequests >= 1, `the request read the chain ${chainRequests} times`)
  const spans = await receiver.waitFor((s) => s.some((span) => span.kind === SERVER), 'the server span')
  const server = spans.filter((s) => s.kind === SERVER)
  t.equal(server.length, 1, 'one server span')
  const span = server[0]!
  t.equal(span.traceId, TRACE_ID, 'in the client\'s trace')
  t.equal(span.parentSpanId, CLIENT_SPAN, 'child of the client\'s span')
  t.equal(span.name, 'GET /v1/epochs/:epoch/participants', 'named method and route pattern')
  t.equal(span.scope, 'edge-api.server', 'Go\'s tracer name')
  t.same(span.attributes, {
    'http.request.method': 'GET',
    'url.path': '/v1/epochs/current/participants',
    'url.scheme': 'http',
    'http.route': '/v1/epochs/:epoch/participants',
    'edge_api.request_id': 'r1',
    'http.response.status_code': 200
  }, 'the current HTTP semantic conventions, the request id, no query string')
  t.equal(span.statusCode, 0, 'a 200 leaves the status unset')
  t.match(span.resource, { 'service.name': 'edge-api', 'service.version': /^\d+\.\d+\.\d+/ })

  const chain = spans.filter((s) => s.kind === CLIENT)
  t.equal(chain.length, chainRequests, 'one client span per chain exchange')
  for (const c of chain) {
    t.equal(c.traceId, TRACE_ID)
    t.equal(c.parentSpanId, span.spanId, `${c.name} is a child of the server span`)
    t.ok(c.startNs >= span.startNs && c.endNs <= span.endNs, 'and within it')
    t.match(c.attributes, { 'edge_api.chain.node': 1, 'edge_api.chain.attempt': 1, 'edge_api.chain.outcome': 'ok', 'http.request.method': 'GET' })
    t.notOk(JSON.stringify(c.attributes).includes('127.0.0.1'), 'never the node\'s URL')
  }
  t.same(sim.traceparents.toSorted(), chain.map((c) => `00-${TRACE_ID}-${c.spanId}-01`).toSorted(), 'each chain request carried its own span as traceparent')
})

t.test('/healthz is not traced; /readyz, a 404 and a request without traceparent are (new root traces)', async (t) => {
  const { receiver, origin } = await tracedOverSimulator(t)
  for (const path of ['/healthz', '/readyz', '/nope?secret=1']) await (await fetch(`${origin}${path}`)).arrayBuffer()
  const spans = await receiver.waitFor((s) => s.filter((span) => span.kind === SERVER).length >= 2, 'two server spans')
  const server = spans.filter((s) => s.kind === SERVER)
  t.same(server.map((s) => s.name).toSorted(), ['GET', 'GET /readyz'], 'the 404 is named by its method alone (no route)')
  const notFound = server.find((s) => s.name === 'GET')!
  t.same([notFound.attributes['url.path'], notFound.attributes['http.response.status_code'], 'http.route' in notFound.attributes], ['/nope', 404, false])
  t.equal(notFound.statusCode, 0, 'a 4xx is the client\'s error, not the server\'s')
  for (const s of server) t.equal(s.parentSpanId, '', 'a root span')
  t.notOk(server.some((s) => s.attributes['url.path'] === '/healthz'), 'no /healthz span')
})

t.test('the drain is visible: requests answered after the drain latch carry edge_api.draining', async (t) => {
  const { receiver, origin, service } = await tracedOverSimulator(t)
  await (await fetch(`${origin}/v1/status`)).arrayBuffer()
  service.readiness.beginDrain()
  await (await fetch(`${origin}/v1/status`)).arrayBuffer()
  const spans = await receiver.waitFor((s) => s.filter((span) => span.kind === SERVER).length === 2, 'two server spans')
  const sorted = spans.filter((s) => s.kind === SERVER).sort((a, b) => Number(a.startNs - b.startNs))
  t.same(sorted.map((s) => s.attributes['edge_api.draining']), [undefined, true], 'only the one answered while draining')
})

t.test('a client that leaves before its answer: its span ends at once, as aborted, and only once', async (t) => {
  const { sim, receiver, origin } = await tracedOverSimulator(t)
  sim.latency(400)
  const left = new AbortController()
  const asked = fetch(`${origin}/v1/epochs/latest`, { signal: left.signal })
  setTimeout(() => left.abort(), 100)
  await t.rejects(asked, { name: 'AbortError' })
  const spans = await receiver.waitFor((s) => s.some((span) => span.kind === SERVER), 'the server span')
  const server = spans.filter((s) => s.kind === SERVER)
  t.equal(server.length, 1)
  t.match(server[0]!.attributes, { 'error.type': 'aborted' }, 'the conventions\' error.type for a request the client gave up on')
  t.notOk('http.response.status_code' in server[0]!.attributes, 'no status: none was sent')
  // The chain answers after the client left; the handler's late answer adds no second span.
  await new Promise((resolve) => setTimeout(resolve, 600))
  await (await fetch(`${origin}/healthz`)).arrayBuffer()
  t.equal(receiver.spans.filter((s) => s.kind === SERVER).length, 1, 'still one server span')
})

t.test('a chain read that starts after the client left is not traced: the request\'s span has ended', async (t) => {
  const { sim, receiver, origin } = await tracedOverSimulator(t)
  sim.resetCounts()
  sim.latency(400)
  const left = new AbortController()
  // Its reads one after the other: the current epoch, then its entry (and more).
  const asked = fetch(`${origin}/v1/epochs/current/participants`, { signal: left.signal })
  setTimeout(() => left.abort(), 100)
  await t.rejects(asked, { name: 'AbortError' })
  await until(() => sim.requests.length >= 2, 'the handler to read on after the client left (a second chain request)', { timeoutMs: 3000 })
  const spans = await receiver.waitFor((s) => s.some((span) => span.kind === SERVER) && s.some((span) => span.kind === CLIENT), 'the server span and the first chain span')
  await new Promise((resolve) => setTimeout(resolve, 200))
  const chain = receiver.spans.filter((s) => s.kind === CLIENT)
  t.equal(chain.length, 1, 'one chain span: the read in flight when the client left')
  t.equal(chain[0]!.name, 'GET /productscience/inference/inference/get_current_epoch')
  t.equal(chain[0]!.parentSpanId, spans.find((s) => s.kind === SERVER)!.spanId)
})

t.test('a 5xx answer is the server\'s error: status ERROR, error.type its status code', async (t) => {
  const { sim, receiver, origin } = await tracedOverSimulator(t)
  sim.drop('/')
  const res = await fetch(`${origin}/v1/epochs/latest`)
  await res.arrayBuffer()
  t.ok(res.status >= 500, `the chain node is gone: ${res.status}`)
  const spans = await receiver.waitFor((s) => s.some((span) => span.kind === SERVER), 'the server span')
  const server = spans.find((s) => s.kind === SERVER)!
  t.equal(server.statusCode, 2, 'ERROR')
  t.match(server.attributes, { 'http.response.status_code': res.status, 'error.type': String(res.status) })
})
