import t from 'tap'
import { checkCommit, parseBlockBody } from '../../src/verify/worker.js'
import { newValidatorSet } from '../../src/verify/validator-set.js'
import { signedCommit, testSigners } from '../fixtures/verify/signed-commit.js'

// The worker's tasks, run inline here (test/verify/workers.test.ts runs them in the thread).

t.test('parseBlockBody keeps the header, the last commit and the validators; drops the rest', async (t) => {
  const body = {
    block: { header: { chain_id: 'c', height: '2' }, data: { txs: ['a'.repeat(100)] }, evidence: {}, last_commit: { height: '1' } },
    validators: [{ pub_key: 'k', voting_power: 1 }],
    extra: true
  }
  const expected = { ok: true, value: { block: { header: { chain_id: 'c', height: '2' }, last_commit: { height: '1' } }, validators: [{ pub_key: 'k', voting_power: 1 }] } }
  t.same(parseBlockBody(JSON.stringify(body)), expected)
  t.same(parseBlockBody(Buffer.from(JSON.stringify(body))), expected, 'from bytes')
  const view = Buffer.from(`xx${JSON.stringify(body)}`).subarray(2)
  t.same(parseBlockBody(new Uint8Array(view.buffer, view.byteOffset, view.byteLength)), expected, 'from a view into a larger buffer')
})

t.test('parseBlockBody passes what is not an object on, for validation to refuse', async (t) => {
  t.same(parseBlockBody('[1]'), { ok: true, value: [1] })
  t.same(parseBlockBody('null'), { ok: true, value: null })
  t.same(parseBlockBody('{"block":7}'), { ok: true, value: { block: 7, validators: undefined } })
  const parsed = (parseBlockBody('{"__proto__":{"polluted":1},"block":{"header":{},"__proto__":{"x":1}}}') as { value: Record<string, Record<string, unknown>> }).value
  t.equal(Object.getPrototypeOf(parsed), Object.prototype, 'no prototype is carried over')
  t.equal(Object.getPrototypeOf(parsed.block), Object.prototype)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('parseBlockBody: malformed JSON is an outcome with the parser\'s message', async (t) => {
  t.match(parseBlockBody('{"block":'), { ok: false, error: /JSON/ })
})

t.test('checkCommit: a verified commit, or CometBFT\'s reason', async (t) => {
  const signers = testSigners('worker', [3n, 2n, 1n])
  const set = newValidatorSet(signers.map((s) => ({ pubKey: s.pubKey, votingPower: s.power })))
  const commit = signedCommit(signers, { chainId: 'c', height: 4n })
  t.same(checkCommit({ chainId: 'c', commit, height: 5n, set }), { ok: true, value: undefined })
  t.same(checkCommit({ chainId: 'c', commit, height: 6n, set }), { ok: false, error: 'invalid commit -- wrong height: 5 vs 4' })
})
