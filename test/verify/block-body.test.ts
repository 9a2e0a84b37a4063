import t from 'tap'
import { INLINE_BODY_LIMIT, parseVerifyBlockBody } from '../../src/verify/block-body.js'

const body = (txBytes: number): Buffer => Buffer.from(JSON.stringify({
  block: { header: { chain_id: 'gonka', height: '5' }, data: { txs: ['x'.repeat(txBytes)] }, last_commit: { height: '4' } },
  validators: []
}))
const expected = { block: { header: { chain_id: 'gonka', height: '5' }, last_commit: { height: '4' } }, validators: [] }

t.test('a small body is parsed inline, a large one in the worker thread: the same answer', async (t) => {
  t.equal(INLINE_BODY_LIMIT, 1024 * 1024)
  const small = body(1000)
  t.same(await parseVerifyBlockBody(small), expected)
  t.equal(small.byteLength, 1000 + body(0).length, 'inline: the bytes stay')
  const large = body(64 * 1024)
  t.same(await parseVerifyBlockBody(large, 1024), expected)
  t.equal(large.byteLength, 0, 'in the worker: the bytes were moved there, not copied')
})

t.test('malformed or empty bodies are 400 with the parser\'s message, inline or not', async (t) => {
  await t.rejects(parseVerifyBlockBody(Buffer.from('{"block":')), { name: 'BodyJsonError', statusCode: 400, message: /JSON/ })
  await t.rejects(parseVerifyBlockBody(Buffer.from(`{"block": ${'1'.repeat(2000)}`), 1024), { name: 'BodyJsonError', statusCode: 400, message: /JSON/ })
  await t.rejects(parseVerifyBlockBody(Buffer.alloc(0)), { statusCode: 400, message: "Body cannot be empty when content-type is set to 'application/json'" })
})
