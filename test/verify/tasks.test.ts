import t from 'tap'
import { pathEscape } from '../../src/verify/key-path.js'
import { checkCommit, parseBlockBody, verifyProof } from '../../src/verify/tasks.js'
import { signedCommit, testSigners } from '../fixtures/verify/signed-commit.js'
import { ics23Vector } from '../fixtures/verify/ics23-vectors.js'

// The worker's tasks, run inline here (test/verify/workers.test.ts runs them in the thread).

const bytes = (text: string): Uint8Array => Buffer.from(text)

t.test('parseBlockBody keeps the header, the last commit and the validators; drops the rest', async (t) => {
  const body = {
    block: { header: { chain_id: 'c', height: '2' }, data: { txs: ['a'.repeat(100)] }, evidence: {}, last_commit: { height: '1' } },
    validators: [{ pub_key: 'k', voting_power: 1 }],
    extra: true
  }
  const expected = { ok: true, value: { block: { header: { chain_id: 'c', height: '2' }, last_commit: { height: '1' } }, validators: [{ pub_key: 'k', voting_power: 1 }] } }
  t.same(parseBlockBody(bytes(JSON.stringify(body))), expected)
  const view = Buffer.from(`xx${JSON.stringify(body)}`).subarray(2)
  t.same(parseBlockBody(new Uint8Array(view.buffer, view.byteOffset, view.byteLength)), expected, 'from a view into a larger buffer')
})

t.test('parseBlockBody passes what is not an object on, for validation to refuse', async (t) => {
  t.same(parseBlockBody(bytes('[1]')), { ok: true, value: [1] })
  t.same(parseBlockBody(bytes('null')), { ok: true, value: null })
  t.same(parseBlockBody(bytes('{"block":7}')), { ok: true, value: { block: 7, validators: undefined } })
  const parsed = (parseBlockBody(bytes('{"__proto__":{"polluted":1},"block":{"header":{},"__proto__":{"x":1}}}')) as { value: Record<string, Record<string, unknown>> }).value
  t.equal(Object.getPrototypeOf(parsed), Object.prototype, 'no prototype is carried over')
  t.equal(Object.getPrototypeOf(parsed.block), Object.prototype)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('parseBlockBody: malformed or too deeply nested JSON is an outcome with the reason', async (t) => {
  t.match(parseBlockBody(bytes('{"block":')), { ok: false, error: /JSON/ })
  t.same(parseBlockBody(bytes(`{"block":{"last_commit":${'['.repeat(5000)}${']'.repeat(5000)}}}`)), { ok: false, error: 'JSON nested deeper than 64 levels' })
})

t.test('checkCommit: a verified commit, CometBFT\'s reason, or a set CometBFT refuses', async (t) => {
  const signers = testSigners('worker', [3n, 2n, 1n])
  const validators = signers.map((s) => ({ pubKey: s.pubKey, votingPower: s.power }))
  const commit = signedCommit(signers, { chainId: 'c', height: 4n })
  t.same(checkCommit({ chainId: 'c', commit, height: 5n, validators }), { ok: true, value: undefined })
  t.same(checkCommit({ chainId: 'c', commit, height: 5n, validators: [...validators].reverse() }), { ok: true, value: undefined }, 'in any order')
  t.same(checkCommit({ chainId: 'c', commit, height: 6n, validators }), { ok: false, error: 'invalid commit -- wrong height: 5 vs 4' })
  t.match(checkCommit({ chainId: 'c', commit, height: 5n, validators: [{ ...validators[0] as typeof validators[0], votingPower: 0n }] }),
    { ok: false, invalidSet: true, error: /^cannot process validators with voting power 0/ })
})

t.test('verifyProof: a proof that does not verify is an outcome with the Go runtime\'s message', async (t) => {
  t.same(verifyProof({ ops: [{ type: 'ics23:nope', key: new Uint8Array(), data: new Uint8Array() }], root: new Uint8Array(), keyPath: '/x', value: new Uint8Array([1]) }),
    { ok: false, error: 'decoding proof: decoding a proof operator: unrecognized proof type ics23:nope' })
  t.same(verifyProof({ ops: [], root: new Uint8Array([1]), keyPath: '/x', value: new Uint8Array([1]) }), { ok: false, error: 'keypath not consumed all' })
  const v = ics23Vector('iavl', 'exist_left')
  t.same(verifyProof({ ops: [{ type: 'ics23:iavl', key: v.key, data: v.proof }], root: v.root, keyPath: `/${pathEscape(v.key)}`, value: v.value as Buffer }),
    { ok: true, value: undefined })
})
