import t from 'tap'
import readDefault, { readVerifyBlockBody } from '../../src/verify/block-body-worker.js'

t.test('keeps the header, the last commit and the validators; drops the rest', async (t) => {
  const body = {
    block: { header: { chain_id: 'c', height: '2' }, data: { txs: ['a'.repeat(100)] }, evidence: {}, last_commit: { height: '1' } },
    validators: [{ pub_key: 'k', voting_power: 1 }],
    extra: true
  }
  const expected = { block: { header: { chain_id: 'c', height: '2' }, last_commit: { height: '1' } }, validators: [{ pub_key: 'k', voting_power: 1 }] }
  t.same(readVerifyBlockBody(JSON.stringify(body)), { ok: true, body: expected })
  t.same(readVerifyBlockBody(Buffer.from(JSON.stringify(body))), { ok: true, body: expected }, 'from bytes')
  const view = Buffer.from(`xx${JSON.stringify(body)}`).subarray(2)
  t.same(readVerifyBlockBody(new Uint8Array(view.buffer, view.byteOffset, view.byteLength)), { ok: true, body: expected }, 'from a view into a larger buffer')
  t.equal(readDefault, readVerifyBlockBody, 'the worker\'s entry point')
})

t.test('what is not an object is passed on for validation to refuse', async (t) => {
  t.same(readVerifyBlockBody('[1]'), { ok: true, body: [1] })
  t.same(readVerifyBlockBody('null'), { ok: true, body: null })
  t.same(readVerifyBlockBody('{"block":7}'), { ok: true, body: { block: 7, validators: undefined } })
  const parsed = (readVerifyBlockBody('{"__proto__":{"polluted":1},"block":{"header":{},"__proto__":{"x":1}}}') as { body: Record<string, Record<string, unknown>> }).body
  t.equal(Object.getPrototypeOf(parsed), Object.prototype, 'no prototype is carried over')
  t.equal(Object.getPrototypeOf(parsed.block), Object.prototype)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('malformed JSON: the parser\'s message, as a value (it crosses back from the worker)', async (t) => {
  t.match(readVerifyBlockBody('{"block":'), { ok: false, error: /JSON/ })
})
