import t from 'tap'
import { ChainSpanRecord, ServerSpanRecord, SpanContext, type SpanRecord } from '../../src/tracing/span-records.js'

// The records the queue holds and the serializer writes: what each knows of its trace. The
// spans' whole path (hooks, chain client, OTLP receiver) is in server-spans and chain-spans.

t.test('a request\'s spans share its context: the server span is its caller\'s child, each chain span the server span\'s', async (t) => {
  const context = new SpanContext('0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', '00f067aa0ba902b7', 'congo=t61rcWkgMzE', true)
  const server = new ServerSpanRecord(context, 'GET', '/v1/participants/:address', '/v1/participants/gonka1x', 'http', 'req-1', 10, 25, 200, false)
  const chain = new ChainSpanRecord(context, 'c0ffee00c0ffee00', '/productscience/inference/inference/participant/{}', 1, 1, false, 12)
  t.equal(server.context, chain.context, 'one context object per request, not a copy per span')
  t.equal(server.context.parentSpanId, '00f067aa0ba902b7', 'the server span\'s parent: the caller\'s span (traceparent)')
  t.equal(chain.context.spanId, 'b7ad6b7169203331', 'the chain span\'s parent: the request\'s server span')
  t.not(chain.spanId, context.spanId, 'a chain span has an id of its own')
})

t.test('a chain span is open until its exchange ends: endMs 0 and outcome ok, then set once', async (t) => {
  const context = new SpanContext('0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', '', '', true)
  const chain = new ChainSpanRecord(context, 'c0ffee00c0ffee00', '/cosmos/base/tendermint/v1beta1/blocks/latest', 2, 2, true, 5)
  t.same([chain.endMs, chain.outcome], [0, 'ok'])
  chain.outcome = 'abandoned'
  chain.endMs = 9
  t.same([chain.node, chain.attempt, chain.hedge, chain.startMs, chain.endMs, chain.outcome], [2, 2, true, 5, 9, 'abandoned'])
})

t.test('the two kinds are told apart as the serializer does, by their class', async (t) => {
  const context = new SpanContext('0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', '', '', true)
  const records: SpanRecord[] = [
    new ServerSpanRecord(context, 'GET', undefined, '/nowhere', 'http', 'req-2', 1, 2, 404, true),
    new ChainSpanRecord(context, 'c0ffee00c0ffee00', '/x', 1, 1, false, 1)
  ]
  t.same(records.map((r) => r instanceof ServerSpanRecord ? 'server' : 'chain'), ['server', 'chain'])
  const [notFound] = records as [ServerSpanRecord]
  t.same([notFound.route, notFound.statusCode, notFound.draining], [undefined, 404, true], 'a 404 has no route; a span answered after the drain latch says so')
})
