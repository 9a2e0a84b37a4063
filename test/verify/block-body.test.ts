import t from 'tap'
import { parseVerifyBlockBody } from '../../src/verify/block-body.js'

const options = { timeLimitMs: 60_000, signal: new AbortController().signal }
const body = (txBytes: number): Buffer => Buffer.from(JSON.stringify({
  block: { header: { chain_id: 'gonka', height: '5' }, data: { txs: ['x'.repeat(txBytes)] }, last_commit: { height: '4' } },
  validators: []
}))
const expected = { block: { header: { chain_id: 'gonka', height: '5' }, last_commit: { height: '4' } }, validators: [] }

t.test('a body of any size is parsed in the worker thread; a large one is moved there, not copied', async (t) => {
  t.same(await parseVerifyBlockBody(body(10), options), expected)
  const large = body(64 * 1024)
  t.same(await parseVerifyBlockBody(large, options), expected)
  t.equal(large.byteLength, 0, 'moved')
})

t.test('malformed, too deep or empty bodies are 400 with the reason', async (t) => {
  await t.rejects(parseVerifyBlockBody(Buffer.from('{"block":'), options), { name: 'BodyJsonError', statusCode: 400, message: /JSON/ })
  await t.rejects(parseVerifyBlockBody(Buffer.from(`{"block": ${'['.repeat(65)}`), options), { statusCode: 400, message: 'JSON nested deeper than 64 levels' })
  await t.rejects(parseVerifyBlockBody(Buffer.alloc(0), options), { statusCode: 400, message: "Body cannot be empty when content-type is set to 'application/json'" })
})
