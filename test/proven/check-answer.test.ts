import t from 'tap'
import { canonical, checkAnswer } from '../../src/proven/check-answer.js'
import { provenRoute, type ProvenRoute } from '../../src/proven/proven-routes.js'
import { activeConfirmationPoCEventKey, activeParticipantsKey, effectiveEpochIndexKey, epochGroupDataKey, epochKey, keyId, paramsKey } from '../../src/proven/store-keys.js'
import { encodeEpoch } from '../../harness/chain-simulator/data/inference-state.js'

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

t.test('values proven absent: the answer must say nothing of them', async (t) => {
  const none = new Map([[keyId(effectiveEpochIndexKey()), null]])
  t.same(checkAnswer(current, { epoch: '42' }, none, AT), { verdict: 'mismatch', detail: '/: the answer has {"epoch":"42"}, the proofs say nothing' }, 'no effective epoch, yet the answer names one')
  const models = provenRoute('/v1/models') as ProvenRoute
  t.same(checkAnswer(models, { data: [] }, none, AT), { verdict: 'verified', keys: 1 }, 'no epoch: no models')
  t.same(checkAnswer(participants, {}, none, AT), { verdict: 'verified', keys: 1 }, 'no epoch: no current participants')
  t.same(checkAnswer(models, { data: [] }, new Map([...EPOCH, [keyId(epochGroupDataKey(42n, '')), null]]), AT), { verdict: 'verified', keys: 2 }, 'no parent group: no models')
  const latest = provenRoute('/v1/epochs/latest') as ProvenRoute
  const nothing = new Map([paramsKey(), effectiveEpochIndexKey(), activeConfirmationPoCEventKey()].map((key) => [keyId(key), null]))
  t.same(checkAnswer(latest, { block_height: 10 }, nothing, AT), { verdict: 'verified', keys: 3 }, 'epoch info with no epoch, params or event')
})

t.test('epoch info\'s latest epoch is the upcoming one once it exists', async (t) => {
  const latest = provenRoute('/v1/epochs/latest') as ProvenRoute
  const proven = new Map<string, Uint8Array | null>([
    [keyId(paramsKey()), null], ...EPOCH, [keyId(activeConfirmationPoCEventKey()), null],
    [keyId(epochKey(43n)), encodeEpoch(43n, 1843500n)]
  ])
  t.same(checkAnswer(latest, { block_height: 10, latest_epoch: { index: 43, poc_start_block_height: '1843500' } }, proven, AT), { verdict: 'verified', keys: 4 }, 'Epoch 42 is not read')
})
