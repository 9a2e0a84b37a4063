import { NamedError } from '../named-error.js'

// What a light-client step concludes about an untrusted block, in the three outcomes a
// caller acts on differently (tendermint-rs's Verdict, with CometBFT's ErrOldHeaderExpired
// apart):
//
// - invalid: the block is wrong (a bad hash, signature, height, time, too little of its own
//   set's power): whoever served it is lying or broken;
// - not-enough-trust: it may be right, but the trusted set's overlap with its signers is
//   too small to tell from here; verify a block between the two first (bisection);
// - expired: the trusted block is older than the trusting period: nothing it vouches for can
//   be believed any more, whatever is served; a new trust root is needed.

export type LightFailure = 'invalid' | 'not-enough-trust' | 'expired'

export type LightVerdict =
  | { readonly ok: true }
  | { readonly ok: false, readonly kind: LightFailure, readonly reason: string }

/** Thrown inside the verifier; verdictOf turns it into a LightVerdict. */
export class LightVerificationError extends NamedError {
  readonly kind: LightFailure
  constructor (kind: LightFailure, message: string) {
    super(message)
    this.kind = kind
  }
}

export const VERIFIED: LightVerdict = { ok: true }

/** Runs `check`, turning a LightVerificationError into its verdict; any other error is a bug and is rethrown. */
export function verdictOf (check: () => void): LightVerdict {
  try {
    check()
    return VERIFIED
  } catch (err) {
    if (err instanceof LightVerificationError) return { ok: false, kind: err.kind, reason: err.message }
    throw err
  }
}
