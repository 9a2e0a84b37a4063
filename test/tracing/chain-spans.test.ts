import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startChainSimulator } from '../fixtures/chain-simulator/simulator.js'
import { CLIENT, OtlpReceiver, SERVER } from '../fixtures/otlp-receiver.js'
import { startTracedService } from '../fixtures/traced-service.js'

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
