import t, { type Test } from 'tap'
import type { Commit } from '../../src/cometbft/types.js'
import { DEFAULT_TRUST_LEVEL, verifyCommitLight, verifyCommitLightTrusting } from '../../src/light/commit-light.js'
import { LightVerificationError, type LightFailure } from '../../src/light/verdict.js'
import { setOf } from '../fixtures/light/test-chain.js'
import { FLAG, signedCommit, TEST_BLOCK_ID, testSigners } from '../fixtures/verify/signed-commit.js'

// CometBFT's VerifyCommitLight and VerifyCommitLightTrusting (types/validation.go) over commits
// signed in the tests (test/fixtures/verify/signed-commit.ts: the simulator's vote encoder).

const CHAIN = 'gonka-test'
const four = testSigners('light', [40n, 30n, 20n, 10n])
const set = setOf(four)
const commit = signedCommit(four, { chainId: CHAIN, height: 9n })

const refuses = (t: Test, run: () => void, kind: LightFailure, message: RegExp, name: string): void => {
  let error: unknown
  try { run() } catch (err) { error = err }
  t.ok(error instanceof LightVerificationError, `${name}: a LightVerificationError`)
  t.equal((error as LightVerificationError).kind, kind, `${name}: ${kind}`)
  t.match((error as Error).message, message, `${name}: the message`)
}
const withSig = (c: Commit, i: number, change: (s: Commit['signatures'][number]) => Commit['signatures'][number]): Commit =>
  ({ ...c, signatures: c.signatures.map((s, j) => j === i ? change(s) : s) })
const garbage = Buffer.alloc(64, 7)

t.test('verifyCommitLight: its shape against the header\'s height and block ID', async (t) => {
  verifyCommitLight(CHAIN, TEST_BLOCK_ID, 9n, commit, set)
  refuses(t, () => verifyCommitLight(CHAIN, TEST_BLOCK_ID, 9n, commit, setOf(four.slice(0, 3))), 'invalid', /^invalid commit -- wrong set size: 3 vs 4$/, 'one signature per validator')
  refuses(t, () => verifyCommitLight(CHAIN, TEST_BLOCK_ID, 10n, commit, set), 'invalid', /^invalid commit -- wrong height: 10 vs 9$/, 'the height')
  const otherParts = { ...TEST_BLOCK_ID, partSetHeader: { ...TEST_BLOCK_ID.partSetHeader, total: 3 } }
  refuses(t, () => verifyCommitLight(CHAIN, otherParts, 9n, commit, set), 'invalid', /^invalid commit -- wrong block ID$/, 'the part set header')
  refuses(t, () => verifyCommitLight(CHAIN, { ...TEST_BLOCK_ID, hash: Buffer.alloc(32) }, 9n, commit, set), 'invalid', /wrong block ID/, 'the hash')
  refuses(t, () => verifyCommitLight(CHAIN, { ...TEST_BLOCK_ID, partSetHeader: { ...TEST_BLOCK_ID.partSetHeader, hash: Buffer.alloc(32) } }, 9n, commit, set), 'invalid', /wrong block ID/, 'the parts hash')
})

t.test('verifyCommitLight: stops once past 2/3; only votes for the block count, each by its index', async (t) => {
  // 40 + 30 > 66: the 20's and 10's signatures are never looked at.
  verifyCommitLight(CHAIN, TEST_BLOCK_ID, 9n, withSig(withSig(commit, 2, (s) => ({ ...s, signature: garbage })), 3, (s) => ({ ...s, signature: garbage })), set)
  refuses(t, () => verifyCommitLight(CHAIN, TEST_BLOCK_ID, 9n, withSig(commit, 1, (s) => ({ ...s, signature: garbage })), set), 'invalid', /^wrong signature \(#1\): 0707/, 'a bad signature before 2/3')
  // A nil vote is skipped, signature and all: 40 + 20 + 10 = 70 still passes without the 30.
  const nil = signedCommit(four, { chainId: CHAIN, height: 9n, flags: [FLAG.COMMIT, FLAG.NIL, FLAG.COMMIT, FLAG.COMMIT] })
  verifyCommitLight(CHAIN, TEST_BLOCK_ID, 9n, withSig(nil, 1, (s) => ({ ...s, signature: garbage })), set)
  const short = signedCommit(four, { chainId: CHAIN, height: 9n, flags: [FLAG.COMMIT, FLAG.NIL, FLAG.ABSENT, FLAG.COMMIT] })
  refuses(t, () => verifyCommitLight(CHAIN, TEST_BLOCK_ID, 9n, short, set), 'invalid', /^invalid commit -- insufficient voting power: got 50, needed more than 66$/, 'nil and absent do not count')
  // The 40's vote presented in the 30's place (both swapped): each index must be its validator's.
  const swapped = { ...commit, signatures: [commit.signatures[1], commit.signatures[0], ...commit.signatures.slice(2)] as Commit['signatures'] }
  refuses(t, () => verifyCommitLight(CHAIN, TEST_BLOCK_ID, 9n, swapped, set), 'invalid', /^wrong validator address in signature #0: [0-9A-F]{40}, the set's is [0-9A-F]{40}$/, 'a signer out of its place')
})

t.test('verifyCommitLightTrusting: a trusted set\'s validators found by address, more than a third of its power', async (t) => {
  verifyCommitLightTrusting(CHAIN, commit, set, DEFAULT_TRUST_LEVEL)
  // The commit's set in another order, or a superset, makes no difference to who signed.
  const bigger = setOf([...four, ...testSigners('outsider', [5n])])
  verifyCommitLightTrusting(CHAIN, commit, bigger, DEFAULT_TRUST_LEVEL)
  // Signers the trusted set does not have are skipped: only the 10 is known here.
  const mostlyNew = setOf([four[3] as typeof four[0], ...testSigners('n', [10n, 10n])])
  refuses(t, () => verifyCommitLightTrusting(CHAIN, commit, mostlyNew, DEFAULT_TRUST_LEVEL), 'not-enough-trust', /^invalid commit -- insufficient voting power: got 10, needed more than 10$/, 'a third exactly')
  // Past the third (40 > 33) the rest is not looked at.
  verifyCommitLightTrusting(CHAIN, withSig(commit, 1, (s) => ({ ...s, signature: garbage })), set, DEFAULT_TRUST_LEVEL)
  refuses(t, () => verifyCommitLightTrusting(CHAIN, withSig(commit, 0, (s) => ({ ...s, signature: garbage })), set, DEFAULT_TRUST_LEVEL), 'invalid', /^wrong signature \(#0\)/, 'a bad signature is invalid, not a lack of trust')
  // A higher trust level, 2/3: 40 + 30 pass; with the 40 voting nil, 30 + 20 + 10 do not.
  const twoThirds = { numerator: 2n, denominator: 3n }
  verifyCommitLightTrusting(CHAIN, commit, set, twoThirds)
  const nil = signedCommit(four, { chainId: CHAIN, height: 9n, flags: [FLAG.NIL, FLAG.COMMIT, FLAG.COMMIT, FLAG.COMMIT] })
  refuses(t, () => verifyCommitLightTrusting(CHAIN, nil, set, twoThirds), 'not-enough-trust', /got 60, needed more than 66$/, 'a nil vote does not count')
})
