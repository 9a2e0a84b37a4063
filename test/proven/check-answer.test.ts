import t from 'tap'
import { canonical, checkAnswer } from '../../src/proven/check-answer.js'
import { provenRoute, type ProvenRoute } from '../../src/proven/proven-routes.js'
import { activeParticipantsKey, effectiveEpochIndexKey, keyId } from '../../src/proven/store-keys.js'

// The comparison itself (each route against real answers: proven-routes.test.ts).

const current = provenRoute('epoch=current') as ProvenRoute
const participants = provenRoute('/v1/epochs/{epoch}/participants') as ProvenRoute
const EPOCH = new Map([[keyId(effectiveEpochIndexKey()), Buffer.from('000000000000002a', 'hex')]])
const AT = { params: { epoch: 'current' }, height: 10 }

t.test('the canonical form: integers as decimal strings, empty values left out', async (t) => {
  t.same(canonical({ a: 42, b: 42n, c: '42', d: '0', e: 0, f: false, g: '', h: null, i: [], j: {}, k: true, l: 'text', m: [0, 1] }), { a: '42', b: '42', c: '42', k: 'true', l: 'text', m: [undefined, '1'] })
  t.equal(canonical({ only: 0 }), undefined)
  t.same(canonical({ b: '1', a: '2' }), { a: '2', b: '1' })
})

t.test('verified when equal; the first difference named otherwise', async (t) => {
  t.same(checkAnswer(current, { epoch: '42' }, EPOCH, AT), { verdict: 'verified', keys: 1 })
  t.same(checkAnswer(current, { epoch: 42 }, EPOCH, AT), { verdict: 'verified', keys: 1 }, 'a number or a string: the same integer')
  t.same(checkAnswer(current, { epoch: '41' }, EPOCH, AT), { verdict: 'mismatch', detail: '/epoch: the answer has "41", the proofs say "42"' })
  t.same(checkAnswer(current, {}, EPOCH, AT), { verdict: 'mismatch', detail: '/: the answer has nothing, the proofs say {"epoch":"42"}' })
})

t.test('an answer checked against fewer values than it derives from is not verified', async (t) => {
  t.same(checkAnswer(participants, {}, EPOCH, AT), { verdict: 'mismatch', detail: '1 of the 2 store values the answer derives from are not proven' })
})

t.test('a proven value edge-api cannot decode is a mismatch, not a verified answer', async (t) => {
  const proven = new Map([...EPOCH, [keyId(activeParticipantsKey(42n)), Uint8Array.of(0x08, 0x01)]])
  t.match(checkAnswer(participants, {}, proven, AT), { verdict: 'mismatch', detail: /^a proven value does not decode: / })
  t.same(checkAnswer(participants, {}, new Map([...EPOCH, [keyId(activeParticipantsKey(42n)), null]]), AT), { verdict: 'verified', keys: 2 }, 'proven absent: an answer that says nothing agrees')
})
