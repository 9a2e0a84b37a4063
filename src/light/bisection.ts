import type { Timestamp } from '../cometbft/timestamp.js'
import { trustedStateOf, type LightBlock, type LightOptions, type TrustedState } from './light-block.js'
import type { LightFailure } from './verdict.js'
import { verifyLightBlock } from './verifier.js'

// Skipping verification with bisection (tendermint-rs's verify_forward with its
// basic_bisecting_schedule; CometBFT's client.verifySkipping does the same): from the trusted
// state, try the target at once; when the trusted set's overlap with the target's signers is
// too small (not-enough-trust), try the height halfway, and so on down, until a block
// verifies; then aim at the target again from it. After a gap (a replica asleep, a node that
// was behind) this verifies O(log n) headers instead of every one, and it never trusts a
// block it could not verify. The blocks come from `fetch` (the caller's I/O); the rest is pure.

/** The light block a node serves at `height`; it rejects when there is none to be had. */
export type FetchLightBlock = (height: bigint) => Promise<LightBlock>

export type BisectionOutcome =
  | { readonly ok: true, readonly state: TrustedState, readonly verified: readonly LightBlock[] }
  | { readonly ok: false, readonly kind: LightFailure, readonly reason: string, readonly height: bigint, readonly verified: readonly LightBlock[] }

/** More fetches than this for one target is a chain changing its whole set at every block, or a node stalling us. */
export const MAX_BISECTION_FETCHES = 1000
/**
 * More verification steps than this for one target: each step is a commit's signatures (about
 * 9 ms of CPU for 100 validators, bench 19), and a block fetched once may be tried from several
 * trusted states, so the fetches alone do not bound the CPU a target may cost.
 */
export const MAX_BISECTION_STEPS = 4 * MAX_BISECTION_FETCHES

/** How much one target may cost: blocks fetched, verification steps tried. */
export interface BisectionLimits {
  readonly maxFetches: number
  readonly maxSteps: number
}

export const BISECTION_LIMITS: BisectionLimits = { maxFetches: MAX_BISECTION_FETCHES, maxSteps: MAX_BISECTION_STEPS }

/** The reason a bisection that hit one of its limits fails with, naming the limit (never a loop that runs on). */
export const BISECTION_GAVE_UP = 'bisection gave up'

/** Verifies from `trusted` up to `target`; on failure, the height whose block failed and the blocks verified before it. */
export async function verifyToTarget (
  trusted: TrustedState, target: bigint, fetch: FetchLightBlock, now: Timestamp, options: LightOptions, limits: BisectionLimits = BISECTION_LIMITS
): Promise<BisectionOutcome> {
  if (target <= trusted.header.height) throw new Error(`the target ${target} is not above the trusted height ${trusted.header.height}`)
  const fetched = new Map<bigint, LightBlock>()
  const verified: LightBlock[] = []
  let state = trusted
  let current = target
  for (let steps = 0; state.header.height < target; steps++) {
    if (steps >= limits.maxSteps) return gaveUp(`${limits.maxSteps} verification steps`, current, verified)
    let block = fetched.get(current)
    if (block === undefined) {
      if (fetched.size >= limits.maxFetches) return gaveUp(`${limits.maxFetches} blocks fetched`, current, verified)
      block = await fetch(current)
      if (block.signedHeader.header.height !== current) {
        return { ok: false, kind: 'invalid', reason: `asked for height ${current}, served ${block.signedHeader.header.height}`, height: current, verified }
      }
      fetched.set(current, block)
    }
    const verdict = verifyLightBlock(state, block, now, options)
    if (verdict.ok) {
      state = trustedStateOf(block)
      verified.push(block)
      current = target
    } else if (verdict.kind === 'not-enough-trust') {
      current = midpoint(state.header.height, current)
    } else {
      return { ok: false, kind: verdict.kind, reason: verdict.reason, height: current, verified }
    }
  }
  return { ok: true, state, verified }
}

/** A failure naming the limit reached: the caller tries again later, from the blocks verified meanwhile. */
function gaveUp (limit: string, height: bigint, verified: readonly LightBlock[]): BisectionOutcome {
  return { ok: false, kind: 'not-enough-trust', reason: `${BISECTION_GAVE_UP} after ${limit}`, height, verified }
}

/** Halfway from `low` (trusted) to `high`, rounded up: never `low` itself, so each try moves on. */
function midpoint (low: bigint, high: bigint): bigint {
  return low + (high + 1n - low) / 2n
}
