import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { CLIENT, OtlpReceiver, SERVER } from '../fixtures/otlp-receiver.js'
import { startTracedService } from '../fixtures/traced-service.js'
import { until } from '../../harness/wait.js'
import type { FastifyRequest } from 'fastify'
import { NODE_INFO_PATH } from '../../src/chain/paths.js'
import { ChainSpans } from '../../src/tracing/chain-spans.js'
import { DropReport } from '../../src/tracing/drop-report.js'
import { createSampler } from '../../src/tracing/sampler.js'
import { RequestTrace, ServerSpans } from '../../src/tracing/server-spans.js'
import { SpanQueue } from '../../src/tracing/span-queue.js'

// Real sockets, a chain simulator and an OTLP receiver per case: slow on a busy machine.
t.setTimeout(180_000)

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c'

for (const transport of ['http', 'grpc'] as const) {
  t.test(`failover, exported over OTLP/${transport}: one client span per attempt, node by position, all children of the server span`, async (t) => {
    const [down, up] = [await startChainSimulator(), await startChainSimulator()]
    t.teardown(() => down.close())
    t.teardown(() => up.close())
    const receiver = transport === 'http' ? await OtlpReceiver.http() : await OtlpReceiver.grpc()
    t.teardown(() => receiver.close())
    const { origin } = await startTracedService(t, [down.url, up.url], receiver, { OTEL_HEADERS: 'authorization=Bearer s3cret, x-tenant = edge' })
    await down.refuse()

    const res = await fetch(`${origin}/v1/versions`, { headers: { traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01` } })
    t.equal(res.status, 200, 'served by the second node')
    await res.arrayBuffer()
    const spans = await receiver.waitFor((s) => s.some((span) => span.kind === SERVER), 'the server span')
    const server = spans.find((s) => s.kind === SERVER)!
    t.equal(server.name, 'GET /v1/versions')
    const chain = spans.filter((s) => s.kind === CLIENT).sort((a, b) => Number(a.attributes['edge_api.chain.attempt']) - Number(b.attributes['edge_api.chain.attempt']))
    t.same(chain.map((c) => [c.attributes['edge_api.chain.attempt'], c.attributes['edge_api.chain.node'], c.attributes['edge_api.chain.outcome'], c.statusCode]),
      [[1, 1, 'unavailable', 2], [2, 2, 'ok', 0]], 'node 1 refused (an error), node 2 answered')
    t.equal(chain[1]!.attributes['http.request.resend_count'], 1, 'the second attempt is a resend')
    t.same(chain.map((c) => c.name), ['GET /cosmos/base/tendermint/v1beta1/node_info', 'GET /cosmos/base/tendermint/v1beta1/node_info'])
    for (const c of chain) t.same([c.traceId, c.parentSpanId], [TRACE_ID, server.spanId], 'in the trace, a child of the server span')
    t.same(up.traceparents, [`00-${TRACE_ID}-${chain[1]!.spanId}-01`], 'the node that answered saw its span as traceparent')
    t.match(receiver.headers[0], { authorization: 'Bearer s3cret', 'x-tenant': 'edge' }, 'OTEL_HEADERS sent with the export, trimmed')

    // Node 1 is probed in the background once its backoff ends: outside any request, not traced.
    await up.close()
    await down.restore()
    await sleep(600)
    t.equal(spans.filter((s) => s.kind === CLIENT).length, 2, 'no span for the background probe')
  })
}

t.test('a hedged read: the attempt that lost (abandoned) is not an error, the hedge that won is ok', async (t) => {
  const [slow, fast] = [await startChainSimulator(), await startChainSimulator()]
  t.teardown(async () => { await slow.close(); await fast.close() })
  const receiver = await OtlpReceiver.http()
  t.teardown(() => receiver.close())
  const { origin } = await startTracedService(t, [slow.url, fast.url], receiver, { EDGE_API_CHAIN_TIMEOUT: '5s' })
  slow.hang(NODE_INFO_PATH)
  const res = await fetch(`${origin}/v1/versions`, { headers: { traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01` } })
  t.equal(res.status, 200, 'answered by the hedge')
  await res.arrayBuffer()
  const spans = await receiver.waitFor((s) => s.some((span) => span.attributes['edge_api.chain.outcome'] === 'abandoned'), 'the abandoned attempt\'s span')
  const chain = spans.filter((s) => s.kind === CLIENT && s.traceId === TRACE_ID)
  const lost = chain.find((c) => c.attributes['edge_api.chain.outcome'] === 'abandoned')!
  const won = chain.find((c) => c.attributes['edge_api.chain.hedge'] === true)!
  t.match(lost.attributes, { 'edge_api.chain.node': 1, 'edge_api.chain.attempt': 1 })
  t.equal(lost.statusCode, 0, 'the lost attempt\'s status is unset, not ERROR')
  t.notOk('error.type' in lost.attributes, 'and it has no error.type')
  t.match([won.attributes['edge_api.chain.outcome'], won.statusCode], ['ok', 0], 'the hedge answered')
})

t.test('a request without traceparent starts a trace; its chain span sends it on; an unsampled parent is honoured', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const receiver = await OtlpReceiver.http()
  t.teardown(() => receiver.close())
  const { origin } = await startTracedService(t, [sim.url], receiver)
  await (await fetch(`${origin}/v1/versions`)).arrayBuffer()
  const spans = await receiver.waitFor((s) => s.some((span) => span.kind === SERVER), 'the server span')
  const server = spans.find((s) => s.kind === SERVER)!
  t.equal(server.parentSpanId, '')
  t.match(sim.traceparents, [new RegExp(`^00-${server.traceId}-[0-9a-f]{16}-01$`)])

  // parentbased_always_on: a caller that did not sample is not sampled here either.
  sim.resetCounts()
  await (await fetch(`${origin}/v1/versions`, { headers: { traceparent: `00-${TRACE_ID}-b7ad6b7169203331-00` } })).arrayBuffer()
  t.match(sim.traceparents, [new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`)], 'the node is told: in the trace, not sampled')
  await sleep(200)
  t.notOk(receiver.spans.some((s) => s.traceId === TRACE_ID), 'nothing exported')
})

t.test('the caller\'s tracestate travels with the trace: to the chain node, and on every exported span', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const receiver = await OtlpReceiver.http()
  t.teardown(() => receiver.close())
  const { origin } = await startTracedService(t, [sim.url], receiver)
  sim.resetCounts()
  await (await fetch(`${origin}/v1/versions`, { headers: { traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01`, tracestate: 'rojo=00f067aa0ba902b7, Bad=x,congo=t61rcWkgMzE' } })).arrayBuffer()
  const spans = await receiver.waitFor((s) => s.some((span) => span.kind === SERVER), 'the server span')
  t.same(sim.tracestates, ['rojo=00f067aa0ba902b7,congo=t61rcWkgMzE'], 'the node got it, its invalid member left out')
  t.ok(spans.length >= 2 && spans.every((s) => s.traceState === 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE'), 'each span carries it')
  t.equal(spans.find((s) => s.kind === SERVER)!.flags, 0x301, 'the server span: sampled, its parent remote')
})

// The request's trace travels with its reads (src/cache/http-cache.ts → src/chain/client.ts),
// not in an AsyncLocalStorage: these cases break if it reaches the wrong exchange.

/** A traceparent of its own per request: trace id `n` repeated, sampled. */
const traceOf = (n: number): string => String(n).repeat(32).slice(0, 32)

t.test('two concurrent requests whose chain reads interleave: each chain span is its own request\'s', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const receiver = await OtlpReceiver.http()
  t.teardown(() => receiver.close())
  const { origin } = await startTracedService(t, [sim.url], receiver)
  // Every read waits, so the requests' reads are in flight together, and answer in any order.
  sim.latency(150)
  const addresses = [PARTICIPANTS[0]!.address, PARTICIPANTS[1]!.address, PARTICIPANTS[2]!.address]
  const answers = await Promise.all(addresses.map(async (address, i) => {
    const res = await fetch(`${origin}/v1/participants/${address}`, { headers: { traceparent: `00-${traceOf(i + 1)}-b7ad6b7169203331-01` } })
    await res.arrayBuffer()
    return res.status
  }))
  t.same(answers, [200, 200, 200])
  const spans = await receiver.waitFor((s) => s.filter((span) => span.kind === SERVER).length === 3, 'three server spans')
  for (const [i, address] of addresses.entries()) {
    const server = spans.find((s) => s.kind === SERVER && s.attributes['url.path'] === `/v1/participants/${address}`)!
    t.equal(server.traceId, traceOf(i + 1), `request ${i + 1}: in its caller's trace`)
    const children = spans.filter((s) => s.kind === CLIENT && s.parentSpanId === server.spanId)
    t.equal(children.length, 1, `request ${i + 1}: one chain span, child of its server span`)
    t.equal(children[0]!.traceId, traceOf(i + 1), `request ${i + 1}: its chain span is in its trace`)
    t.ok(sim.traceparents.includes(`00-${traceOf(i + 1)}-${children[0]!.spanId}-01`), `request ${i + 1}: the node saw its chain span`)
  }
  t.equal(spans.filter((s) => s.kind === CLIENT).length, 3, 'no chain span beyond those')
})

t.test('a coalesced read has one span, under the request that started it; the one that joined it has none', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const receiver = await OtlpReceiver.http()
  t.teardown(() => receiver.close())
  const { origin } = await startTracedService(t, [sim.url], receiver)
  sim.latency(300)
  const ask = async (n: number): Promise<number> => {
    const res = await fetch(`${origin}/v1/epochs/latest`, { headers: { traceparent: `00-${traceOf(n)}-b7ad6b7169203331-01` } })
    await res.arrayBuffer()
    return res.status
  }
  const first = ask(1)
  await until(() => sim.count('/productscience/inference/inference/epoch_info') > 0, 'the first request\'s epoch_info read to reach the node', { timeoutMs: 1000 })
  const second = ask(2)
  t.same(await Promise.all([first, second]), [200, 200])
  t.equal(sim.count('/productscience/inference/inference/epoch_info'), 1, 'one upstream read for both')
  const spans = await receiver.waitFor((s) => s.filter((span) => span.kind === SERVER).length === 2, 'two server spans')
  const [one, two] = [1, 2].map((n) => spans.find((s) => s.kind === SERVER && s.traceId === traceOf(n))!)
  const chain = spans.filter((s) => s.kind === CLIENT)
  t.equal(chain.length, 1, 'one chain span')
  t.same([chain[0]!.traceId, chain[0]!.parentSpanId], [traceOf(1), one!.spanId], 'the first request\'s')
  t.notOk(spans.some((s) => s.parentSpanId === two!.spanId), 'the second request, which joined the read, has no chain span')
})

t.test('a head poll the request waits for is its: one chain span per node, children of its server span', async (t) => {
  const [a, b] = [await startChainSimulator(), await startChainSimulator()]
  t.teardown(() => a.close())
  t.teardown(() => b.close())
  const receiver = await OtlpReceiver.http()
  t.teardown(() => receiver.close())
  // Two nodes, no answer cache: a latest-state answer is pinned to the best head, which the
  // first request has to ask the nodes for.
  const { origin } = await startTracedService(t, [a.url, b.url], receiver)
  const res = await fetch(`${origin}/v1/epochs/latest`, { headers: { traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01` } })
  t.equal(res.status, 200)
  await res.arrayBuffer()
  const spans = await receiver.waitFor((s) => s.some((span) => span.kind === SERVER), 'the server span')
  const server = spans.find((s) => s.kind === SERVER)!
  const chain = spans.filter((s) => s.kind === CLIENT)
  for (const c of chain) t.equal(c.parentSpanId, server.spanId, `${c.name} on node ${String(c.attributes['edge_api.chain.node'])}: a child of the request's span`)
  const polls = chain.filter((c) => c.name === 'GET /cosmos/base/tendermint/v1beta1/blocks/latest')
  t.same(polls.map((c) => c.attributes['edge_api.chain.node']).sort(), [1, 2], 'the poll asked both nodes, in the request\'s trace')
  t.equal(chain.filter((c) => c.name === 'GET /productscience/inference/inference/epoch_info').length, 1, 'and its read')
  t.equal(a.traceparents.filter((p) => p?.includes(TRACE_ID) === true).length + b.traceparents.filter((p) => p?.includes(TRACE_ID) === true).length, 3, 'each of the three exchanges sent its traceparent')
})

t.test('an exchange ended twice (a caller\'s slip) is queued once, with its first outcome', async (t) => {
  const queue = new SpanQueue({
    exporter: { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} },
    maxQueueSize: 16,
    maxExportBatchSize: 16,
    scheduleDelayMs: 60_000,
    exportTimeoutMs: 1000,
    drops: new DropReport({ warn: () => {} })
  })
  t.teardown(async () => await queue.shutdown())
  const chain = new ChainSpans(new ServerSpans(createSampler('always_on', 1), queue), queue)
  const request = { headers: {}, method: 'GET', url: '/v1/status', protocol: 'http', id: 'req-1' } as unknown as FastifyRequest
  const exchange = chain.exchange(new RequestTrace(request, '/v1/status'), 1, '/cosmos/base/tendermint/v1beta1/blocks/latest', 1)
  t.match(exchange?.headers.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
  exchange?.end('timeout')
  exchange?.end('ok')
  t.equal(queue.queued, 1, 'one span')
})
