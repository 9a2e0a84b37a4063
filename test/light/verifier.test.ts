import t, { type Test } from 'tap'
import { followerOptions, type LightBlock, type TrustedState } from '../../src/light/light-block.js'
import type { LightFailure, LightVerdict } from '../../src/light/verdict.js'
import { headerExpired, iso, verifyAdjacent, verifyLightBlock, verifyNonAdjacent } from '../../src/light/verifier.js'
import { after, honestChain, OPTIONS, setOf, signedBlock, T0, trustedOf } from '../fixtures/light/test-chain.js'
import { FLAG, testSigners } from '../fixtures/verify/signed-commit.js'

// The light client's steps over chains built and signed here (test/fixtures/light/test-chain.ts):
// each check of verifier.ts has a block that only it refuses, so taking any one check out
// fails a test here by name. tendermint-rs's own cases are tendermint-rs-vectors.test.ts's.

const honest = testSigners('honest', [40n, 30n, 20n, 10n])
const chain = honestChain(Array.from({ length: 8 }, () => honest))
const block = (h: number): LightBlock => chain[h - 1] as LightBlock
const trusted = (h: number): TrustedState => trustedOf(block(h))

const passes = (t: Test, verdict: LightVerdict, name: string): void => {
  t.same(verdict, { ok: true }, name)
}
const fails = (t: Test, verdict: LightVerdict, kind: LightFailure, reason: RegExp, name: string): void => {
  t.equal(verdict.ok ? 'verified' : verdict.kind, kind, name)
  t.match(verdict.ok ? '' : verdict.reason, reason, `${name}: the reason`)
}

t.test('an honest chain verifies step by step and by skipping', async (t) => {
  for (let h = 2; h <= 8; h++) passes(t, verifyAdjacent(trusted(h - 1), block(h), after(8, 1), OPTIONS), `adjacent ${h - 1} -> ${h}`)
  passes(t, verifyNonAdjacent(trusted(1), block(8), after(8, 1), OPTIONS), 'skipping 1 -> 8')
  passes(t, verifyLightBlock(trusted(3), block(4), after(8, 1), OPTIONS), 'verifyLightBlock: adjacent')
  passes(t, verifyLightBlock(trusted(3), block(7), after(8, 1), OPTIONS), 'verifyLightBlock: skipping')
})

t.test('the header hash: a header served with a field changed no longer matches what was signed', async (t) => {
  const { header, commit } = block(5).signedHeader
  const forged = { ...block(5), signedHeader: { header: { ...header, appHash: Buffer.alloc(32, 0xee) }, commit } }
  fails(t, verifyAdjacent(trusted(4), forged, after(8, 0), OPTIONS), 'invalid', /^untrustedHeader\.ValidateBasic failed: commit signs block [0-9A-F]{64}, header is block [0-9A-F]{64}$/, 'adjacent')
  fails(t, verifyNonAdjacent(trusted(2), forged, after(8, 0), OPTIONS), 'invalid', /commit signs block/, 'skipping')
})

t.test('the 2/3 tally: exactly 2/3 of the set\'s power committing is not enough; nil votes do not count', async (t) => {
  // 40 + 30 commit (70 > 66): verifies; 40 + 20 commit, 30 nil (60): does not; 1+1 of 1+1+1 (exactly 2/3): does not.
  const ok = signedBlock({ height: 5n, signers: honest, nextSigners: honest, lastBlockId: block(4).signedHeader.commit.blockId, flags: [FLAG.COMMIT, FLAG.COMMIT, FLAG.NIL, FLAG.ABSENT] })
  passes(t, verifyAdjacent(trusted(4), ok, after(8, 0), OPTIONS), '70 of 100')
  const short = signedBlock({ height: 5n, signers: honest, nextSigners: honest, lastBlockId: block(4).signedHeader.commit.blockId, flags: [FLAG.COMMIT, FLAG.NIL, FLAG.COMMIT, FLAG.ABSENT] })
  fails(t, verifyAdjacent(trusted(4), short, after(8, 0), OPTIONS), 'invalid', /^invalid commit -- insufficient voting power: got 60, needed more than 66$/, '60 of 100')
  const three = testSigners('three', [1n, 1n, 1n])
  const threeChain = honestChain([three, three])
  const twoOfThree = signedBlock({ height: 2n, signers: three, nextSigners: three, lastBlockId: threeChain[0]?.signedHeader.commit.blockId, flags: [FLAG.COMMIT, FLAG.COMMIT, FLAG.NIL] })
  fails(t, verifyAdjacent(trustedOf(threeChain[0] as LightBlock), twoOfThree, after(8, 0), OPTIONS), 'invalid', /got 2, needed more than 2$/, 'exactly 2/3')
  // Skipping needs the 2/3 of the new set too, after the trusting third.
  const skipShort = signedBlock({ height: 6n, signers: honest, nextSigners: honest, flags: [FLAG.COMMIT, FLAG.NIL, FLAG.COMMIT, FLAG.ABSENT] })
  fails(t, verifyNonAdjacent(trusted(2), skipShort, after(8, 0), OPTIONS), 'invalid', /got 60, needed more than 66$/, 'skipping: 60 of 100')
})

t.test('the trusting third: skipping to a set that shares a third or less of the trusted power is not enough trust', async (t) => {
  // The trusted set (honest: 40/30/20/10) against new sets keeping some of its validators.
  const newcomers = testSigners('new', [50n, 50n, 50n])
  const keeping = (kept: typeof honest): LightBlock => signedBlock({ height: 6n, signers: [...kept, ...newcomers], nextSigners: [...kept, ...newcomers] })
  const [v40, v30, v20, v10] = honest as [typeof honest[0], typeof honest[0], typeof honest[0], typeof honest[0]]
  fails(t, verifyNonAdjacent(trusted(2), keeping([v30]), after(8, 0), OPTIONS), 'not-enough-trust', /^invalid commit -- insufficient voting power: got 30, needed more than 33$/, '30 of the trusted 100')
  fails(t, verifyNonAdjacent(trusted(2), keeping([v20, v10]), after(8, 0), OPTIONS), 'not-enough-trust', /got 30, needed more than 33$/, '20 + 10')
  passes(t, verifyNonAdjacent(trusted(2), keeping([v40]), after(8, 0), OPTIONS), '40 of the trusted 100, and 2/3 of the new set')
  // Exactly a third of 3: not enough.
  const three = testSigners('third', [1n, 1n, 1n])
  const threeChain = honestChain([three])
  const third = signedBlock({ height: 3n, signers: [three[0] as typeof three[0], ...newcomers], nextSigners: newcomers })
  fails(t, verifyNonAdjacent(trustedOf(threeChain[0] as LightBlock), third, after(8, 0), OPTIONS), 'not-enough-trust', /got 1, needed more than 1$/, 'exactly 1/3')
  t.throws(() => verifyNonAdjacent(trusted(2), keeping([v40]), after(8, 0), { ...OPTIONS, trustLevel: { numerator: 1n, denominator: 4n } }), /trust level must be within \[1\/3, 1\], given 1\/4/)
  t.throws(() => verifyNonAdjacent(trusted(2), keeping([v40]), after(8, 0), { ...OPTIONS, trustLevel: { numerator: 0n, denominator: 0n } }), /trust level/)
  t.throws(() => verifyNonAdjacent(trusted(2), keeping([v40]), after(8, 0), { ...OPTIONS, trustLevel: { numerator: 4n, denominator: 3n } }), /trust level/)
})

t.test('a malicious validator set: another set signs a header naming itself, or is handed over for the honest one', async (t) => {
  const attackers = testSigners('attacker', [100n, 100n, 100n])
  const theirs = signedBlock({ height: 5n, signers: attackers, nextSigners: attackers, lastBlockId: block(4).signedHeader.commit.blockId })
  fails(t, verifyAdjacent(trusted(4), theirs, after(8, 0), OPTIONS), 'invalid', /^expected old header next validators \([0-9A-F]{64}\) to match those from new header \([0-9A-F]{64}\)$/, 'adjacent: not the set the trusted header named')
  fails(t, verifyNonAdjacent(trusted(2), theirs, after(8, 0), OPTIONS), 'not-enough-trust', /got 0, needed more than 33$/, 'skipping: none of the trusted power signed')
  // The honest header, with the attackers' set handed over as the one that signed it.
  fails(t, verifyAdjacent(trusted(4), { ...block(5), validators: setOf(attackers) }, after(8, 0), OPTIONS), 'invalid', /^expected new header validators \([0-9A-F]{64}\) to match those that were supplied \([0-9A-F]{64}\) at height 5$/, 'validators_hash')
  fails(t, verifyAdjacent(trusted(4), { ...block(5), nextValidators: setOf(attackers) }, after(8, 0), OPTIONS), 'invalid', /^expected new header next validators/, 'next_validators_hash')
})

t.test('a conflicting header signed by less than a third of the trusted power', async (t) => {
  const v30 = honest[1] as typeof honest[0]
  // v30 signs a fork of height 6 (another app hash) with outsiders, whose set names only them.
  const outsiders = testSigners('fork', [100n, 100n])
  const fork = signedBlock({ height: 6n, signers: [v30, ...outsiders], nextSigners: [v30, ...outsiders], change: { appHash: Buffer.alloc(32, 1) } })
  fails(t, verifyNonAdjacent(trusted(2), fork, after(8, 0), OPTIONS), 'not-enough-trust', /got 30, needed more than 33$/, 'skipping')
  // Adjacent, in the honest set's name: v20 and v10 sign alone.
  const adjacentFork = signedBlock({ height: 5n, signers: honest, nextSigners: honest, lastBlockId: block(4).signedHeader.commit.blockId, change: { appHash: Buffer.alloc(32, 1) }, flags: [FLAG.ABSENT, FLAG.ABSENT, FLAG.COMMIT, FLAG.COMMIT] })
  fails(t, verifyAdjacent(trusted(4), adjacentFork, after(8, 0), OPTIONS), 'invalid', /got 30, needed more than 66$/, 'adjacent')
})

t.test('the chain id: the same validators signing another chain\'s header', async (t) => {
  const other = signedBlock({ height: 5n, signers: honest, nextSigners: honest, lastBlockId: block(4).signedHeader.commit.blockId, chainId: 'gonka-other' })
  fails(t, verifyAdjacent(trusted(4), other, after(8, 0), OPTIONS), 'invalid', /header belongs to another chain "gonka-other", not "gonka-light-test"$/, 'adjacent')
  fails(t, verifyNonAdjacent(trusted(2), other, after(8, 0), OPTIONS), 'invalid', /header belongs to another chain/, 'skipping')
})

t.test('heights and times: higher, later, not from the future', async (t) => {
  fails(t, verifyNonAdjacent(trusted(6), block(4), after(8, 0), OPTIONS), 'invalid', /^expected new header height 4 to be greater than one of old header 6$/, 'a lower height')
  fails(t, verifyNonAdjacent(trusted(6), block(6), after(8, 0), OPTIONS), 'invalid', /height 6 to be greater than one of old header 6$/, 'the same height')
  const early = signedBlock({ height: 5n, signers: honest, nextSigners: honest, lastBlockId: block(4).signedHeader.commit.blockId, seconds: T0 + 4 * 6 })
  fails(t, verifyAdjacent(trusted(4), early, after(8, 0), OPTIONS), 'invalid', /^expected new header time 2026-01-01T00:00:24Z to be after old header time 2026-01-01T00:00:24Z$/, 'not later')
  // Block 5's time is T0 + 30 s: 10 s of drift allowed.
  passes(t, verifyAdjacent(trusted(4), block(5), after(5, -9), OPTIONS), '9 s ahead of our clock')
  fails(t, verifyAdjacent(trusted(4), block(5), after(5, -10), OPTIONS), 'invalid', /^new header has a time from the future 2026-01-01T00:00:30Z \(now: 2026-01-01T00:00:20Z; max clock drift: 10000ms\)$/, '10 s ahead')
})

t.test('the trusting period: a trusted header older than it vouches for nothing', async (t) => {
  const period = OPTIONS.trustingPeriodMs / 1000
  // Block 4 is at T0 + 24 s; it expires at T0 + 24 s + 14 days, that instant included.
  const lastMoment = { seconds: T0 + 24 + period - 1, nanos: 999_999_999 }
  passes(t, verifyAdjacent(trusted(4), block(5), lastMoment, OPTIONS), 'a nanosecond before')
  fails(t, verifyAdjacent(trusted(4), block(5), { seconds: T0 + 24 + period, nanos: 0 }, OPTIONS), 'expired', /^old header has expired at 2026-01-15T00:00:24Z \(now: 2026-01-15T00:00:24Z\)$/, 'adjacent, at expiry')
  fails(t, verifyNonAdjacent(trusted(2), block(5), { seconds: T0 + 12 + period, nanos: 1 }, OPTIONS), 'expired', /\(now: 2026-01-15T00:00:12\.000000001Z\)$/, 'skipping')
  t.equal(headerExpired(block(4).signedHeader.header, OPTIONS.trustingPeriodMs, lastMoment), false)
})

t.test('the last block ID: with linkLastBlockId an adjacent header must name the trusted one', async (t) => {
  const spliced = signedBlock({ height: 5n, signers: honest, nextSigners: honest, lastBlockId: block(3).signedHeader.commit.blockId })
  fails(t, verifyAdjacent(trusted(4), spliced, after(8, 0), OPTIONS), 'invalid', /^new header's last block ID \([0-9A-F]{64}\) is not the trusted header \([0-9A-F]{64}\)$/, 'linked to block 3')
  passes(t, verifyAdjacent(trusted(4), spliced, after(8, 0), { ...OPTIONS, linkLastBlockId: false }), 'not checked when off (tendermint-rs\'s vectors)')
  const { linkLastBlockId: _left, ...unset } = OPTIONS
  fails(t, verifyAdjacent(trusted(4), spliced, after(8, 0), unset), 'invalid', /^new header's last block ID/, 'checked when not set: on by default')
  fails(t, verifyAdjacent(trusted(4), spliced, after(8, 0), followerOptions(OPTIONS.trustingPeriodMs)), 'invalid', /^new header's last block ID/, 'checked by the follower\'s options')
})

t.test('the trusting pass finds signers by address and counts each once', async (t) => {
  const base = signedBlock({ height: 6n, signers: honest, nextSigners: honest })
  const { commit } = base.signedHeader
  // The 10's vote copied in place of 40's and 30's: counted once it would be 10 + 10, a
  // third of the trusted power reached by one validator; refused as a double vote.
  const doubled = { ...commit, signatures: commit.signatures.map((s, i) => i < 2 ? commit.signatures[3] as typeof s : s) }
  const forged = { ...base, signedHeader: { ...base.signedHeader, commit: doubled } }
  fails(t, verifyNonAdjacent(trusted(2), forged, after(8, 0), OPTIONS), 'invalid', /^double vote from [0-9A-F]{40} \(0 and 1\)$/, 'a double vote')
  // A bad signature is invalid in either pass, never "not enough trust".
  const badSig = { ...commit, signatures: commit.signatures.map((s, i) => i === 0 ? { ...s, signature: Buffer.alloc(64, 1) } : s) }
  fails(t, verifyNonAdjacent(trusted(2), { ...base, signedHeader: { ...base.signedHeader, commit: badSig } }, after(8, 0), OPTIONS), 'invalid', /^wrong signature \(#0\): 0101/, 'a bad signature')
})

t.test('adjacency is the caller\'s to choose right: the wrong function throws', async (t) => {
  t.throws(() => verifyAdjacent(trusted(2), block(4), after(8, 0), OPTIONS), /^Error: headers must be adjacent in height: 2 then 4$|headers must be adjacent/)
  t.throws(() => verifyNonAdjacent(trusted(3), block(4), after(8, 0), OPTIONS), /headers must be non adjacent in height: 3 then 4/)
})

t.test('iso: RFC 3339 with the nanoseconds there are', async (t) => {
  t.equal(iso({ seconds: T0, nanos: 0 }), '2026-01-01T00:00:00Z')
  t.equal(iso({ seconds: T0, nanos: 120_000_000 }), '2026-01-01T00:00:00.12Z')
})
