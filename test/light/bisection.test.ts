import t from 'tap'
import { BISECTION_GAVE_UP, BISECTION_LIMITS, MAX_BISECTION_STEPS, verifyToTarget, type FetchLightBlock } from '../../src/light/bisection.js'
import type { LightBlock } from '../../src/light/light-block.js'
import { after, honestChain, OPTIONS, trustedOf } from '../fixtures/light/test-chain.js'
import { testSigners } from '../fixtures/verify/signed-commit.js'

// Bisection over chains built and signed here. The sets change wholly every four blocks
// (heights 1-4, 5-8, 9-12, 13-16 each a set of its own), so no skip across a change can be
// trusted: the client must find the blocks at each change.

const SETS = [0, 1, 2, 3].map((k) => testSigners(`epoch-${k}`, [10n, 20n, 30n]))
const rotating = honestChain(Array.from({ length: 16 }, (_, i) => SETS[Math.floor(i / 4)] as typeof SETS[0]))
const steady = honestChain(Array.from({ length: 16 }, () => SETS[0] as typeof SETS[0]))
const NOW = after(16, 1)

/** A node serving `chain`, recording the heights asked for; `change` alters what it serves. */
function node (chain: LightBlock[], change: (block: LightBlock) => LightBlock = (b) => b): { fetch: FetchLightBlock, asked: bigint[] } {
  const asked: bigint[] = []
  return { asked, fetch: async (height) => { asked.push(height); return change(chain[Number(height) - 1] as LightBlock) } }
}
const heights = (blocks: readonly LightBlock[]): number[] => blocks.map((b) => Number(b.signedHeader.header.height))

t.test('the same set throughout: one skip straight to the target', async (t) => {
  const { fetch, asked } = node(steady)
  const outcome = await verifyToTarget(trustedOf(steady[0] as LightBlock), 16n, fetch, NOW, OPTIONS)
  t.ok(outcome.ok)
  t.same(heights(outcome.verified), [16])
  t.same(asked, [16n])
})

t.test('sets changing wholly: halving down to a block it can trust, then on to the target, each block fetched once', async (t) => {
  const { fetch, asked } = node(rotating)
  const outcome = await verifyToTarget(trustedOf(rotating[0] as LightBlock), 16n, fetch, NOW, OPTIONS)
  t.ok(outcome.ok)
  // tendermint-rs's schedule, worked by hand (a block's next set is the one skips from it count):
  // from 1: 16, 9, 5 not trusted, 3 verified; from 3: 16, 10, 7, 5 not, 4 verified (next: the
  // second set); from 4: 16, 10 not, 7 verified; from 7: 16, 12, 10, 9 not, 8 verified (next:
  // the third set); from 8: 16 not, 12 verified (next: the fourth); from 12: 16.
  t.same(heights(outcome.verified), [3, 4, 7, 8, 12, 16])
  t.same(asked, [16n, 9n, 5n, 3n, 10n, 7n, 4n, 12n, 8n], 'nine of the fifteen blocks, none twice')
  t.equal(outcome.ok && outcome.state.header.height, 16n)
})

t.test('a forged block on the way is caught and named, not skipped', async (t) => {
  const forge = (b: LightBlock): LightBlock => b.signedHeader.header.height !== 9n
    ? b
    : { ...b, signedHeader: { ...b.signedHeader, header: { ...b.signedHeader.header, appHash: Buffer.alloc(32, 6) } } }
  const outcome = await verifyToTarget(trustedOf(rotating[0] as LightBlock), 16n, node(rotating, forge).fetch, NOW, OPTIONS)
  t.match(outcome, { ok: false, kind: 'invalid', height: 9n, reason: /commit signs block/ })
  const wrongHeight = await verifyToTarget(trustedOf(rotating[0] as LightBlock), 16n, async () => rotating[14] as LightBlock, NOW, OPTIONS)
  t.same(wrongHeight, { ok: false, kind: 'invalid', reason: 'asked for height 16, served 15', height: 16n, verified: [] })
})

t.test('an expired trusted state, a target not above it, too many blocks', async (t) => {
  const expired = await verifyToTarget(trustedOf(steady[0] as LightBlock), 16n, node(steady).fetch, { seconds: NOW.seconds + OPTIONS.trustingPeriodMs / 1000, nanos: 0 }, OPTIONS)
  t.match(expired, { ok: false, kind: 'expired', height: 16n })
  await t.rejects(verifyToTarget(trustedOf(steady[3] as LightBlock), 4n, node(steady).fetch, NOW, OPTIONS), /the target 4 is not above the trusted height 4/)
  const capped = await verifyToTarget(trustedOf(rotating[0] as LightBlock), 16n, node(rotating).fetch, NOW, OPTIONS, { maxFetches: 3, maxSteps: 100 })
  t.match(capped, { ok: false, kind: 'not-enough-trust', reason: 'bisection gave up after 3 blocks fetched', height: 3n })
})

t.test('a step limit: a target that needs more verification steps fails by name, with what it verified so far', async (t) => {
  // The rotating chain takes 20 steps from 1 to 16 (6 verified, 14 tries not trusted; the
  // schedule above): block 4 is verified at the 9th.
  const { fetch } = node(rotating)
  const capped = await verifyToTarget(trustedOf(rotating[0] as LightBlock), 16n, fetch, NOW, OPTIONS, { maxFetches: 100, maxSteps: 9 })
  t.match(capped, { ok: false, kind: 'not-enough-trust', reason: `${BISECTION_GAVE_UP} after 9 verification steps` })
  t.same(heights(capped.verified), [3, 4], 'the blocks verified before the limit are handed back')
  const enough = await verifyToTarget(trustedOf(rotating[0] as LightBlock), 16n, node(rotating).fetch, NOW, OPTIONS, { maxFetches: 100, maxSteps: 20 })
  t.ok(enough.ok, 'twenty steps reach it')
  t.equal(BISECTION_LIMITS.maxSteps, MAX_BISECTION_STEPS)
})
