import { setImmediate as nextTurn } from 'node:timers/promises'
import t, { type Test } from 'tap'
import type { Commit } from '../../src/verify/commit.js'
import { newValidatorSet, type ValidatorSet } from '../../src/verify/validator-set.js'
import { CommitVerificationError, DEFAULT_SLICE_MS, verifyCommit } from '../../src/verify/verify-commit.js'
import { FLAG, signedCommit, testSigners, type TestSigner } from '../fixtures/verify/signed-commit.js'

const CHAIN = 'gonka-test'
const setOf = (signers: readonly TestSigner[]): ValidatorSet => newValidatorSet(signers.map((s) => ({ pubKey: s.pubKey, votingPower: s.power })))
const rejects = async (t: Test, promise: Promise<void>, message: string | RegExp, name?: string): Promise<void> => {
  await t.rejects(promise, { name: 'CommitVerificationError', message }, name ?? String(message))
}

// 40 + 30 commit, 20 votes nil, 10 is absent: 70 of 100 is more than 2/3.
const four = testSigners('four', [40n, 30n, 20n, 10n])
const fourFlags = [FLAG.COMMIT, FLAG.COMMIT, FLAG.NIL, FLAG.ABSENT]
const fourCommit = signedCommit(four, { chainId: CHAIN, height: 99n, round: 2, flags: fourFlags })

t.test('a commit built from the specification verifies: commit and nil votes checked, absent skipped', async (t) => {
  await verifyCommit(CHAIN, fourCommit, 100n, setOf(four))
  // The set may come in any order: it is sorted as CometBFT sorts it.
  await verifyCommit(CHAIN, fourCommit, 100n, newValidatorSet([...four].reverse().map((s) => ({ pubKey: s.pubKey, votingPower: s.power }))))
  // An absent vote's signature is never looked at.
  const noise = { ...fourCommit, signatures: fourCommit.signatures.map((s, i) => i === 3 ? { ...s, signature: new Uint8Array(64).fill(9) } : s) }
  await verifyCommit(CHAIN, noise, 100n, setOf(four))
  t.pass()
})

t.test('tampering with anything signed fails with CometBFT\'s message', async (t) => {
  const set = setOf(four)
  const at = (i: number, change: (c: Commit['signatures'][number]) => Commit['signatures'][number]): Commit =>
    ({ ...fourCommit, signatures: fourCommit.signatures.map((s, j) => j === i ? change(s) : s) })
  const sig0 = Buffer.from(fourCommit.signatures[0]?.signature as Uint8Array)
  const flipped = Buffer.from(sig0)
  flipped[5] = (flipped[5] as number) ^ 1
  await rejects(t, verifyCommit(CHAIN, at(0, (s) => ({ ...s, signature: flipped })), 100n, set), `wrong signature (#0): ${flipped.toString('hex').toUpperCase()}`, 'one byte of a signature')
  await rejects(t, verifyCommit(CHAIN, at(1, (s) => ({ ...s, timestamp: { ...s.timestamp, nanos: s.timestamp.nanos + 1 } })), 100n, set), /^wrong signature \(#1\): /, 'a timestamp, by one nanosecond')
  await rejects(t, verifyCommit(CHAIN, at(2, (s) => ({ ...s, blockIdFlag: FLAG.COMMIT })), 100n, set), /^wrong signature \(#2\): /, 'a nil vote presented as a commit')
  await rejects(t, verifyCommit(CHAIN, { ...fourCommit, round: 1 }, 100n, set), /^wrong signature \(#0\): /, 'the round')
  await rejects(t, verifyCommit('gonka-other', fourCommit, 100n, set), /^wrong signature \(#0\): /, 'the chain id')
  const otherId = { ...fourCommit.blockId, hash: Buffer.alloc(32, 7) }
  await rejects(t, verifyCommit(CHAIN, { ...fourCommit, blockId: otherId }, 100n, set), /^wrong signature \(#0\): /, 'the block id')
  const swapped = newValidatorSet(four.map((s, i) => ({ pubKey: s.pubKey, votingPower: i === 0 ? 30n : i === 1 ? 40n : s.power })))
  await rejects(t, verifyCommit(CHAIN, fourCommit, 100n, swapped), /^wrong signature \(#0\): /, 'the set\'s order (powers swapped)')
})

t.test('the shape must match: one signature per validator, the height before the block\'s', async (t) => {
  await rejects(t, verifyCommit(CHAIN, fourCommit, 100n, setOf(four.slice(0, 3))), 'invalid commit -- wrong set size: 3 vs 4')
  await rejects(t, verifyCommit(CHAIN, fourCommit, 99n, setOf(four)), 'invalid commit -- wrong height: 98 vs 99')
  await rejects(t, verifyCommit(CHAIN, { ...fourCommit, signatures: [] }, 100n, newValidatorSet([])), 'invalid commit -- insufficient voting power: got 0, needed more than 0', 'an empty set never signs')
})

t.test('more than 2/3 of the power must commit, in integer arithmetic', async (t) => {
  const three = testSigners('three', [1n, 1n, 1n])
  await verifyCommit(CHAIN, signedCommit(three, { chainId: CHAIN, height: 9n }), 10n, setOf(three))
  await rejects(t, verifyCommit(CHAIN, signedCommit(three, { chainId: CHAIN, height: 9n, flags: [FLAG.COMMIT, FLAG.COMMIT, FLAG.NIL] }), 10n, setOf(three)),
    'invalid commit -- insufficient voting power: got 2, needed more than 2', 'exactly 2/3 is not enough; nil votes do not count')
  await rejects(t, verifyCommit(CHAIN, signedCommit(four, { chainId: CHAIN, height: 99n, flags: [FLAG.NIL, FLAG.COMMIT, FLAG.COMMIT, FLAG.COMMIT] }), 100n, setOf(four)),
    'invalid commit -- insufficient voting power: got 60, needed more than 66')

  // Beyond 2^53: the total is CometBFT's cap; the first validator holds exactly 2/3 of it.
  const big = testSigners('big', [768614336404564650n, 384307168202282325n])
  const bigSet = setOf(big)
  t.equal(bigSet.totalVotingPower, 1152921504606846975n)
  await rejects(t, verifyCommit(CHAIN, signedCommit(big, { chainId: CHAIN, height: 9n, flags: [FLAG.COMMIT, FLAG.NIL] }), 10n, bigSet),
    'invalid commit -- insufficient voting power: got 768614336404564650, needed more than 768614336404564650')
  await verifyCommit(CHAIN, signedCommit(big, { chainId: CHAIN, height: 9n }), 10n, bigSet)
})

t.test('power is tallied before any signature is checked', async (t) => {
  // Every signature is garbage, but the power is short: the answer is the power, at no crypto cost.
  const three = testSigners('three', [1n, 1n, 1n])
  const commit = signedCommit(three, { chainId: CHAIN, height: 9n, flags: [FLAG.COMMIT, FLAG.NIL, FLAG.NIL] })
  const garbage = { ...commit, signatures: commit.signatures.map((s) => ({ ...s, signature: new Uint8Array(64) })) }
  await rejects(t, verifyCommit(CHAIN, garbage, 10n, setOf(three)), 'invalid commit -- insufficient voting power: got 1, needed more than 2')
})

t.test('a 100-validator commit yields to the event loop between slices, and stops when aborted', async (t) => {
  const hundred = testSigners('hundred', Array.from({ length: 100 }, () => 10n))
  const commit = signedCommit(hundred, { chainId: CHAIN, height: 41n })
  const set = setOf(hundred)
  t.equal(DEFAULT_SLICE_MS, 5)

  const turns = async (sliceMs: number): Promise<number> => {
    let count = 0
    const state = { running: true }
    const counting = (async () => { while (state.running) { await nextTurn(); count++ } })()
    const started = performance.now()
    await verifyCommit(CHAIN, commit, 42n, set, { sliceMs })
    const seen = count
    t.comment(`100 signatures, sliceMs ${sliceMs}: ${(performance.now() - started).toFixed(1)} ms, ${seen} turns of the event loop meanwhile`)
    state.running = false
    await counting
    return seen
  }
  t.ok(await turns(0) >= 99, 'sliceMs 0: a turn of the event loop after every signature')
  t.equal(await turns(Number.POSITIVE_INFINITY), 0, 'no slicing: the loop is held to the end')

  const controller = new AbortController()
  controller.abort(new Error('client gone'))
  await t.rejects(verifyCommit(CHAIN, commit, 42n, set, { sliceMs: 0, signal: controller.signal }), { message: 'client gone' }, 'an aborted request stops at the next slice')
  t.ok(new CommitVerificationError('x') instanceof Error)
})
