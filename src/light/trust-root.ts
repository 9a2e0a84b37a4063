import { formatDuration } from '../duration.js'
import type { Timestamp } from '../cometbft/timestamp.js'
import { headerHash } from './header-hash.js'
import type { LightBlock, TrustedState } from './light-block.js'
import { validatorSetHash } from './validator-set-hash.js'
import type { LightFailure } from './verdict.js'
import { headerExpired, iso } from './verifier.js'

// Where the light client's trust starts: a header the operator names by height and hash
// (EDGE_API_TRUST_HEIGHT, EDGE_API_TRUST_HASH), taken from a source other than the nodes it
// verifies (an explorer, a validator, a trusted node's /block). Everything later is verified
// from it. The hash pins the header, so its time, its sets and its chain are as trusted as
// the operator's word; the sets a node hands over with it must be the ones it names.
//
// A root can be checked for expiry only against its header's time: boot checks the
// variables' form (src/config/verification-settings.ts), and this refuses an expired root on
// first contact, naming the variables to change.

export interface TrustRoot {
  readonly height: bigint
  /** The header hash (the block's block_id.hash), 32 bytes. */
  readonly hash: Uint8Array
}

export type TrustRootOutcome =
  | { readonly ok: true, readonly state: TrustedState }
  | { readonly ok: false, readonly kind: LightFailure, readonly reason: string }

/** The trusted state `root` gives, from the block a node served for its height, at `now`. */
export function trustFromRoot (root: TrustRoot, block: LightBlock, now: Timestamp, trustingPeriodMs: number): TrustRootOutcome {
  const { header } = block.signedHeader
  if (header.height !== root.height) return invalid(`the node served height ${header.height} for the trust root's EDGE_API_TRUST_HEIGHT=${root.height}`)
  const hash = headerHash(header) ?? new Uint8Array()
  if (Buffer.compare(hash, root.hash) !== 0) {
    return invalid(`the header the node served at height ${root.height} hashes to ${hex(hash)}, not the trust root's EDGE_API_TRUST_HASH=${hex(root.hash)}`)
  }
  if (Buffer.compare(validatorSetHash(block.nextValidators), header.nextValidatorsHash) !== 0) {
    return invalid(`the next validators the node served at height ${root.height} are not the set the trusted header names`)
  }
  if (headerExpired(header, trustingPeriodMs, now)) {
    return {
      ok: false,
      kind: 'expired',
      reason: `the trust root has expired: its header (EDGE_API_TRUST_HEIGHT=${root.height}) is from ${iso(header.time)}, older than EDGE_API_TRUSTING_PERIOD=${formatDuration(trustingPeriodMs)} at ${iso(now)}; set EDGE_API_TRUST_HEIGHT and EDGE_API_TRUST_HASH to a newer header`
    }
  }
  return { ok: true, state: { header, nextValidators: block.nextValidators } }
}

function invalid (reason: string): TrustRootOutcome {
  return { ok: false, kind: 'invalid', reason }
}

function hex (bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').toUpperCase()
}
