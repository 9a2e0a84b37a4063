import t, { type Test } from 'tap'
import type { Commit } from '../../src/cometbft/types.js'
import { newValidatorSet, type ValidatorSet } from '../../src/cometbft/validator-set.js'
import { CommitVerificationError, verifyCommit } from '../../src/verify/verify-commit.js'
import { FLAG, signedCommit, testSigners, type TestSigner } from '../fixtures/verify/signed-commit.js'

const CHAIN = 'gonka-test'
const setOf = (signers: readonly TestSigner[]): ValidatorSet => newValidatorSet(signers.map((s) => ({ pubKey: s.pubKey, votingPower: s.power })))
const fails = (t: Test, run: () => void, message: string | RegExp, name?: string): void => {
  t.throws(run, { name: 'CommitVerificationError', message }, name ?? String(message))
}

// 40 + 30 commit, 20 votes nil, 10 is absent: 70 of 100 is more than 2/3.
const four = testSigners('four', [40n, 30n, 20n, 10n])
const fourFlags = [FLAG.COMMIT, FLAG.COMMIT, FLAG.NIL, FLAG.ABSENT]
const fourCommit = signedCommit(four, { chainId: CHAIN, height: 99n, round: 2, flags: fourFlags })

t.test('a commit built from the specification verifies: commit and nil votes checked, absent skipped', async (t) => {
  verifyCommit(CHAIN, fourCommit, 100n, setOf(four))
  // The set may come in any order: it is sorted as CometBFT sorts it.
  verifyCommit(CHAIN, fourCommit, 100n, newValidatorSet([...four].reverse().map((s) => ({ pubKey: s.pubKey, votingPower: s.power }))))
  // An absent vote's signature is never looked at.
  const noise = { ...fourCommit, signatures: fourCommit.signatures.map((s, i) => i === 3 ? { ...s, signature: new Uint8Array(64).fill(9) } : s) }
  verifyCommit(CHAIN, noise, 100n, setOf(four))
  t.pass()
})

t.test('tampering with anything signed fails with CometBFT\'s message', async (t) => {
  const set = setOf(four)
  const at = (i: number, change: (c: Commit['signatures'][number]) => Commit['signatures'][number]): Commit =>
    ({ ...fourCommit, signatures: fourCommit.signatures.map((s, j) => j === i ? change(s) : s) })
  const sig0 = Buffer.from(fourCommit.signatures[0]?.signature as Uint8Array)
  const flipped = Buffer.from(sig0)
  flipped[5] = (flipped[5] as number) ^ 1
  fails(t, () => verifyCommit(CHAIN, at(0, (s) => ({ ...s, signature: flipped })), 100n, set), `wrong signature (#0): ${flipped.toString('hex').toUpperCase()}`, 'one byte of a signature')
  fails(t, () => verifyCommit(CHAIN, at(1, (s) => ({ ...s, timestamp: { ...s.timestamp, nanos: s.timestamp.nanos + 1 } })), 100n, set), /^wrong signature \(#1\): /, 'a timestamp, by one nanosecond')
  fails(t, () => verifyCommit(CHAIN, at(2, (s) => ({ ...s, blockIdFlag: FLAG.COMMIT })), 100n, set), /^wrong signature \(#2\): /, 'a nil vote presented as a commit')
  fails(t, () => verifyCommit(CHAIN, { ...fourCommit, round: 1 }, 100n, set), /^wrong signature \(#0\): /, 'the round')
  fails(t, () => verifyCommit('gonka-other', fourCommit, 100n, set), /^wrong signature \(#0\): /, 'the chain id')
  const otherId = { ...fourCommit.blockId, hash: Buffer.alloc(32, 7) }
  fails(t, () => verifyCommit(CHAIN, { ...fourCommit, blockId: otherId }, 100n, set), /^wrong signature \(#0\): /, 'the block id')
  const swapped = newValidatorSet(four.map((s, i) => ({ pubKey: s.pubKey, votingPower: i === 0 ? 30n : i === 1 ? 40n : s.power })))
  fails(t, () => verifyCommit(CHAIN, fourCommit, 100n, swapped), /^wrong signature \(#0\): /, 'the set\'s order (powers swapped)')
})

t.test('the shape must match: one signature per validator, the height before the block\'s', async (t) => {
  fails(t, () => verifyCommit(CHAIN, fourCommit, 100n, setOf(four.slice(0, 3))), 'invalid commit -- wrong set size: 3 vs 4')
  fails(t, () => verifyCommit(CHAIN, fourCommit, 99n, setOf(four)), 'invalid commit -- wrong height: 98 vs 99')
  fails(t, () => verifyCommit(CHAIN, { ...fourCommit, signatures: [] }, 100n, newValidatorSet([])), 'invalid commit -- insufficient voting power: got 0, needed more than 0', 'an empty set never signs')
})

t.test('more than 2/3 of the power must commit, in integer arithmetic', async (t) => {
  const three = testSigners('three', [1n, 1n, 1n])
  verifyCommit(CHAIN, signedCommit(three, { chainId: CHAIN, height: 9n }), 10n, setOf(three))
  fails(t, () => verifyCommit(CHAIN, signedCommit(three, { chainId: CHAIN, height: 9n, flags: [FLAG.COMMIT, FLAG.COMMIT, FLAG.NIL] }), 10n, setOf(three)),
    'invalid commit -- insufficient voting power: got 2, needed more than 2', 'exactly 2/3 is not enough; nil votes do not count')
  fails(t, () => verifyCommit(CHAIN, signedCommit(four, { chainId: CHAIN, height: 99n, flags: [FLAG.NIL, FLAG.COMMIT, FLAG.COMMIT, FLAG.COMMIT] }), 100n, setOf(four)),
    'invalid commit -- insufficient voting power: got 60, needed more than 66')

  // Beyond 2^53: the total is CometBFT's cap; the first validator holds exactly 2/3 of it.
  const big = testSigners('big', [768614336404564650n, 384307168202282325n])
  const bigSet = setOf(big)
  t.equal(bigSet.totalVotingPower, 1152921504606846975n)
  fails(t, () => verifyCommit(CHAIN, signedCommit(big, { chainId: CHAIN, height: 9n, flags: [FLAG.COMMIT, FLAG.NIL] }), 10n, bigSet),
    'invalid commit -- insufficient voting power: got 768614336404564650, needed more than 768614336404564650')
  verifyCommit(CHAIN, signedCommit(big, { chainId: CHAIN, height: 9n }), 10n, bigSet)
})

t.test('power is tallied before any signature is checked', async (t) => {
  // Every signature is garbage, but the power is short: the answer is the power, at no crypto cost.
  const three = testSigners('three', [1n, 1n, 1n])
  const commit = signedCommit(three, { chainId: CHAIN, height: 9n, flags: [FLAG.COMMIT, FLAG.NIL, FLAG.NIL] })
  const garbage = { ...commit, signatures: commit.signatures.map((s) => ({ ...s, signature: new Uint8Array(64) })) }
  fails(t, () => verifyCommit(CHAIN, garbage, 10n, setOf(three)), 'invalid commit -- insufficient voting power: got 1, needed more than 2')
})

t.test('a 100-validator commit', async (t) => {
  const hundred = testSigners('hundred', Array.from({ length: 100 }, () => 10n))
  const started = performance.now()
  verifyCommit(CHAIN, signedCommit(hundred, { chainId: CHAIN, height: 41n }), 42n, setOf(hundred))
  t.comment(`100 signatures (keys imported, sign bytes built) in ${(performance.now() - started).toFixed(1)} ms`)
  t.ok(new CommitVerificationError('x') instanceof Error)
})
