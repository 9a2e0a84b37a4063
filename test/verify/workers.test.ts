import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import { checkCommitInWorker, parseBlockBodyInWorker, TaskTimeLimitError, verifyProofInWorker, workers, WORKER_RESOURCE_LIMITS } from '../../src/verify/workers.js'
import { signedCommit, testSigners } from '../fixtures/verify/signed-commit.js'

const options = (timeLimitMs = 60_000, signal = new AbortController().signal): { timeLimitMs: number, signal: AbortSignal } => ({ timeLimitMs, signal })
const signers = testSigners('workers', Array.from({ length: 100 }, () => 10n))
const validators = signers.map((s) => ({ pubKey: s.pubKey, votingPower: s.power }))
const commit = signedCommit(signers, { chainId: 'c', height: 9n })
const task = { chainId: 'c', commit, height: 10n, validators }

t.test('a thread\'s start is not counted in its first task\'s time limit', async (t) => {
  // No thread yet: this task starts one. This process then stops for longer than the task's
  // limit (Atomics.wait: blocked, no CPU spent), so the thread's start, as this process learns
  // of it, ends past that limit. Counted from the task's sending, the limit has run out by then
  // (what the demo's first commit check met: 503); counted from the start, the task has its
  // whole 3 s for well under a millisecond of work, at nice +10 on a loaded machine too.
  t.equal(workers().threads.length, 0, 'no thread yet')
  const answer = parseBlockBodyInWorker(Buffer.from('{}'), options(3000))
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3500)
  t.match(await answer, { ok: true })
})

t.test('a body parsed in the thread: moved there when it owns its buffer, copied when it is a view', async (t) => {
  const json = JSON.stringify({ block: { header: { chain_id: 'c' }, last_commit: null, data: { txs: ['x'.repeat(5000)] } }, validators: [] })
  const own = new Uint8Array(Buffer.from(json))
  t.same(await parseBlockBodyInWorker(own, options()), { ok: true, value: { block: { header: { chain_id: 'c' }, last_commit: null }, validators: [] } })
  t.equal(own.byteLength, 0, 'transferred')
  const shared = Buffer.from(`...${json}`)
  const view = shared.subarray(3)
  t.match(await parseBlockBodyInWorker(view, options()), { ok: true })
  t.equal(shared.byteLength, json.length + 3, 'the shared buffer is intact')
  t.match(await parseBlockBodyInWorker(Buffer.from('{'), options()), { ok: false, error: /JSON/ })
})

t.test('a body nested thousands deep settles at once, refused in the thread (it used to never settle)', async (t) => {
  const deep = Buffer.from(`{"block":{"header":{},"last_commit":${'{"a":'.repeat(4000)}1${'}'.repeat(4000)}}}`)
  t.same(await parseBlockBodyInWorker(deep, options()), { ok: false, error: 'JSON nested deeper than 64 levels' })
})

t.test('a 100-validator commit is checked in the thread while the event loop keeps turning', async (t) => {
  t.same(await checkCommitInWorker(task, options()), { ok: true, value: undefined }, 'bigints and bytes cross intact')
  let turns = 0
  const state = { running: true }
  const counting = (async () => { while (state.running) { await nextTurn(); turns++ } })()
  const outcome = await checkCommitInWorker(task, options())
  const seen = turns
  state.running = false
  await counting
  t.same(outcome, { ok: true, value: undefined })
  t.ok(seen > 0, `the event loop turned ${seen} times meanwhile`)
  t.match(await checkCommitInWorker({ ...task, chainId: 'other' }, options()), { ok: false, error: /^wrong signature \(#0\): / })
})

t.test('a task past its time limit is stopped with its thread; the next task gets a new one', async (t) => {
  // A 300-validator commit, ~70 ms of the thread's CPU, against 1 ms: the 100-validator one
  // (~26 ms) was answered first in one run of the suite, this process waiting for a CPU while
  // the thread worked (the answer is then read before the timer that ended long before it).
  const signers = testSigners('past its time limit', Array.from({ length: 300 }, () => 10n))
  const slow = { chainId: 'c', commit: signedCommit(signers, { chainId: 'c', height: 9n }), height: 10n, validators: signers.map((s) => ({ pubKey: s.pubKey, votingPower: s.power })) }
  const before = workers().threads[0]
  await t.rejects(checkCommitInWorker(slow, options(1)), new TaskTimeLimitError(1))
  t.not(workers().threads[0], before, 'the thread it ran on is gone')
  t.same(await checkCommitInWorker(task, options()), { ok: true, value: undefined })
})

t.test('a task whose signal aborts (the client left) rejects with AbortError, not the time limit', async (t) => {
  const left = new AbortController()
  const running = checkCommitInWorker(task, options(60_000, left.signal))
  left.abort()
  await t.rejects(running, { name: 'AbortError' })
  t.match(await verifyProofInWorker({ ops: [], root: new Uint8Array([1]), keyPath: '/x', value: new Uint8Array([1]) }, options()), { ok: false, error: 'keypath not consumed all' })
})

t.test('one pool for the process, its heap bounded; a thread failing outside any task does not take the process down', async (t) => {
  t.equal(workers(), workers())
  t.same(workers().options.resourceLimits, WORKER_RESOURCE_LIMITS)
  // What Piscina emits when an idle thread dies: with no listener, Node would exit on it.
  t.equal(workers().emit('error', new Error('an idle thread died')), true, 'the event has a listener')
  t.match(await parseBlockBodyInWorker(Buffer.from('{}'), options()), { ok: true }, 'and the pool still works')
})
