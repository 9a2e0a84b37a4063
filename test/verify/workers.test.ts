import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import { newValidatorSet } from '../../src/verify/validator-set.js'
import { checkCommitInWorker, parseBlockBodyInWorker, workers } from '../../src/verify/workers.js'
import { signedCommit, testSigners } from '../fixtures/verify/signed-commit.js'

t.test('a body parsed in the thread: moved there when it owns its buffer, copied when it is a view', async (t) => {
  const json = JSON.stringify({ block: { header: { chain_id: 'c' }, last_commit: null, data: { txs: ['x'.repeat(5000)] } }, validators: [] })
  const own = new Uint8Array(Buffer.from(json))
  t.same(await parseBlockBodyInWorker(own), { ok: true, value: { block: { header: { chain_id: 'c' }, last_commit: null }, validators: [] } })
  t.equal(own.byteLength, 0, 'transferred')
  const shared = Buffer.from(`...${json}`)
  const view = shared.subarray(3)
  t.match(await parseBlockBodyInWorker(view), { ok: true })
  t.equal(shared.byteLength, json.length + 3, 'the shared buffer is intact')
  t.match(await parseBlockBodyInWorker(Buffer.from('{')), { ok: false, error: /JSON/ })
})

t.test('a 100-validator commit is checked in the thread while the event loop keeps turning', async (t) => {
  const signers = testSigners('workers', Array.from({ length: 100 }, () => 10n))
  const set = newValidatorSet(signers.map((s) => ({ pubKey: s.pubKey, votingPower: s.power })))
  const commit = signedCommit(signers, { chainId: 'c', height: 9n })
  t.same(await checkCommitInWorker({ chainId: 'c', commit, height: 10n, set }), { ok: true, value: undefined }, 'bigints and bytes cross intact')

  let turns = 0
  const state = { running: true }
  const counting = (async () => { while (state.running) { await nextTurn(); turns++ } })()
  const outcome = await checkCommitInWorker({ chainId: 'c', commit, height: 10n, set })
  const seen = turns
  state.running = false
  await counting
  t.same(outcome, { ok: true, value: undefined })
  t.ok(seen > 0, `the event loop turned ${seen} times meanwhile`)
  const wrong = await checkCommitInWorker({ chainId: 'other', commit, height: 10n, set })
  t.match(wrong, { ok: false, error: /^wrong signature \(#0\): / })
})

t.test('one pool for the process; a thread failing outside any task does not take the process down', async (t) => {
  t.equal(workers(), workers())
  // What Piscina emits when an idle thread dies: with no listener, Node would exit on it.
  t.equal(workers().emit('error', new Error('an idle thread died')), true, 'the event has a listener')
  t.match(await parseBlockBodyInWorker(Buffer.from('{}')), { ok: true }, 'and the pool still works')
})
