import t from 'tap'
import { BlockBodyParser, INLINE_BODY_LIMIT } from '../../src/verify/block-body.js'

const body = (txBytes: number): Buffer => Buffer.from(JSON.stringify({
  block: { header: { chain_id: 'gonka', height: '5' }, data: { txs: ['x'.repeat(txBytes)] }, last_commit: { height: '4' } },
  validators: []
}))
const expected = { block: { header: { chain_id: 'gonka', height: '5' }, last_commit: { height: '4' } }, validators: [] }

t.test('a small body is parsed inline, no thread started', async (t) => {
  const parser = new BlockBodyParser()
  t.teardown(() => parser.close())
  t.equal(INLINE_BODY_LIMIT, 1024 * 1024)
  t.same(await parser.parse(body(1000)), expected)
  t.equal(parser.started, false)
})

t.test('a large body is parsed in a worker thread; only what the route reads comes back', async (t) => {
  const parser = new BlockBodyParser(1024)
  t.teardown(() => parser.close())
  const large = body(64 * 1024)
  t.same(await parser.parse(large), expected)
  t.equal(parser.started, true)
  t.equal(large.byteLength, 0, 'the bytes were moved to the worker, not copied')
  // A view into a shared buffer is copied first: the shared buffer stays usable.
  const shared = Buffer.concat([Buffer.from('...'), body(4096)])
  const view = shared.subarray(3)
  t.same(await parser.parse(view), expected)
  t.equal(shared.byteLength, 4096 + body(0).length + 3, 'the shared buffer is intact')
  await t.rejects(parser.parse(Buffer.from(`{"block": ${'1'.repeat(2000)}`)), { statusCode: 400, message: /JSON/ }, 'malformed JSON from the worker: 400')
})

t.test('malformed or empty bodies are 400 with the parser\'s message', async (t) => {
  const parser = new BlockBodyParser()
  t.teardown(() => parser.close())
  await t.rejects(parser.parse(Buffer.from('{"block":')), { name: 'BodyJsonError', statusCode: 400, message: /JSON/ })
  await t.rejects(parser.parse(Buffer.alloc(0)), { statusCode: 400, message: "Body cannot be empty when content-type is set to 'application/json'" })
})
