import t from 'tap'
import { headerHash } from '../../src/light/header-hash.js'
import type { LightBlock } from '../../src/light/light-block.js'
import { trustFromRoot, type TrustRoot } from '../../src/light/trust-root.js'
import { verifyLightBlock } from '../../src/light/verifier.js'
import { after, honestChain, OPTIONS, setOf, T0 } from '../fixtures/light/test-chain.js'
import { testSigners } from '../fixtures/verify/signed-commit.js'

// The operator's trust root met on first contact: the header a node serves at its height.

const signers = testSigners('root', [5n, 4n, 3n])
const later = testSigners('later', [9n])
const chain = honestChain([signers, signers, later, later])
const block = (h: number): LightBlock => chain[h - 1] as LightBlock
const root: TrustRoot = { height: 2n, hash: headerHash(block(2).signedHeader.header) as Uint8Array }
const PERIOD = OPTIONS.trustingPeriodMs

t.test('the header at the root\'s height with the root\'s hash is trusted, and the chain verifies from it', async (t) => {
  const outcome = trustFromRoot(root, block(2), after(4, 1), PERIOD)
  t.ok(outcome.ok)
  if (!outcome.ok) return
  t.equal(outcome.state.header, block(2).signedHeader.header)
  t.same(verifyLightBlock(outcome.state, block(3), after(4, 1), OPTIONS), { ok: true }, 'the next block, signed by the set the root names as next')
  t.same(verifyLightBlock(outcome.state, block(4), after(4, 1), OPTIONS), { ok: true }, 'a skip: the root names the new set as its next')
  const first = trustFromRoot({ height: 1n, hash: headerHash(block(1).signedHeader.header) as Uint8Array }, block(1), after(4, 1), PERIOD)
  t.same(first.ok && verifyLightBlock(first.state, block(4), after(4, 1), OPTIONS), { ok: false, kind: 'not-enough-trust', reason: 'invalid commit -- insufficient voting power: got 0, needed more than 4' }, 'from height 1, a skip past the set change needs the block between')
})

t.test('a node serving another header for the root is wrong, whatever it says', async (t) => {
  t.same(trustFromRoot(root, block(3), after(4, 1), PERIOD), { ok: false, kind: 'invalid', reason: 'the node served height 3 for the trust root\'s EDGE_API_TRUST_HEIGHT=2' })
  const forged = { ...block(2), signedHeader: { ...block(2).signedHeader, header: { ...block(2).signedHeader.header, appHash: Buffer.alloc(32, 9) } } }
  const outcome = trustFromRoot(root, forged, after(4, 1), PERIOD)
  t.match(outcome, { ok: false, kind: 'invalid', reason: /^the header the node served at height 2 hashes to [0-9A-F]{64}, not the trust root's EDGE_API_TRUST_HASH=[0-9A-F]{64}$/ })
  const noSet = { ...block(2), signedHeader: { ...block(2).signedHeader, header: { ...block(2).signedHeader.header, validatorsHash: new Uint8Array() } } }
  t.match(trustFromRoot(root, noSet, after(4, 1), PERIOD), { ok: false, kind: 'invalid', reason: /hashes to , not the trust root's/ }, 'a header with no validators hash has no hash')
  t.same(trustFromRoot(root, { ...block(2), nextValidators: setOf(signers) }, after(4, 1), PERIOD), { ok: false, kind: 'invalid', reason: 'the next validators the node served at height 2 are not the set the trusted header names' })
})

t.test('an expired root is refused when its header is met, naming the variables to change', async (t) => {
  // Block 2 is at T0 + 12 s; the period ends at T0 + 12 s + 14 days, that instant included.
  const expiry = { seconds: T0 + 12 + PERIOD / 1000, nanos: 0 }
  t.ok(trustFromRoot(root, block(2), { ...expiry, seconds: expiry.seconds - 1 }, PERIOD).ok, 'a second before')
  t.same(trustFromRoot(root, block(2), expiry, PERIOD), {
    ok: false,
    kind: 'expired',
    reason: 'the trust root has expired: its header (EDGE_API_TRUST_HEIGHT=2) is from 2026-01-01T00:00:12Z, older than EDGE_API_TRUSTING_PERIOD=336h at 2026-01-15T00:00:12Z; set EDGE_API_TRUST_HEIGHT and EDGE_API_TRUST_HASH to a newer header'
  })
  // The hash is checked first: a forged header cannot make a root look fresh or stale.
  const stale = { ...block(2), signedHeader: { ...block(2).signedHeader, header: { ...block(2).signedHeader.header, time: { seconds: T0, nanos: 0 } } } }
  t.match(trustFromRoot(root, stale, expiry, PERIOD), { ok: false, kind: 'invalid' })
})
