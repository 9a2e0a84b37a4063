import type { Header, SignedHeader } from '../cometbft/types.js'
import type { ValidatorSet } from '../cometbft/validator-set.js'
import { DEFAULT_TRUST_LEVEL, type Fraction } from './commit-light.js'

// What the light client verifies and what it keeps (verifier.ts). Plain data, no I/O: a
// caller fetches the blocks (the head poll, a node's /blocks and /validatorsets) and keeps
// the newest trusted state.

/** A block as a node serves it to a light client: its signed header and both sets it names. */
export interface LightBlock {
  readonly signedHeader: SignedHeader
  /** The set whose hash is the header's validators_hash: the one that signed the commit. */
  readonly validators: ValidatorSet
  /** The set whose hash is the header's next_validators_hash: the next block's signers. */
  readonly nextValidators: ValidatorSet
}

/**
 * A header already verified (or the operator's trust root), with the set it names as the
 * next one. The skipping rule counts that set's power, as tendermint-rs does (CometBFT's
 * VerifyNonAdjacent counts the trusted height's own set; both are sets the trusted header
 * commits to, so either is sound).
 */
export interface TrustedState {
  readonly header: Header
  readonly nextValidators: ValidatorSet
}

export interface LightOptions {
  /** How long a verified header vouches for what follows it; below the chain's unbonding period. */
  readonly trustingPeriodMs: number
  /** How far ahead of our clock a header's time may be (CometBFT's default is 10 s). */
  readonly maxClockDriftMs: number
  /** The trusted set's share that must sign a block skipped to: 1/3 by default, 1 at most. */
  readonly trustLevel: Fraction
  /**
   * Adjacent steps also require the new header's last_block_id to name the trusted header.
   * Neither CometBFT's verifier nor tendermint-rs's checks it (the 2/3 of the set the trusted
   * header names already pins the block), and tendermint-rs's generated vectors leave it
   * empty; a chain's real headers always carry it, so it is on unless set to false (only
   * tendermint-rs's vectors do).
   */
  readonly linkLastBlockId?: boolean
}

/** How a follower of a real chain verifies (the cursor, src/verified/): CometBFT's defaults, the last block ID checked. */
export function followerOptions (trustingPeriodMs: number): LightOptions {
  return { trustingPeriodMs, maxClockDriftMs: DEFAULT_MAX_CLOCK_DRIFT_MS, trustLevel: DEFAULT_TRUST_LEVEL, linkLastBlockId: true }
}

/** CometBFT's light client default: a header up to 10 s ahead of our clock is not from the future. */
export const DEFAULT_MAX_CLOCK_DRIFT_MS = 10_000

/** The state a block verified from `untrusted` gives: the next step trusts it. */
export function trustedStateOf (block: LightBlock): TrustedState {
  return { header: block.signedHeader.header, nextValidators: block.nextValidators }
}
