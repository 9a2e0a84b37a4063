// What an answer says of itself (docs/verified-reads.md, "X-Verification"): one header, its
// values in the form of a structured field (RFC 8941: a token, then parameters), since no
// standard exists (the reference's §3.2; the name follows X-Block-Height). Exposed in CORS
// with X-Verified-Height by the wiring.

export const VERIFICATION_HEADER = 'x-verification'

/**
 * Why an answer is not verified: `range` its route serves a list the SDK cannot prove
 * complete; `not-yet` no verified header commits to its height yet; `pruned` no node asked
 * still holds that height's state; `headers-only` the replica verifies headers, not answers
 * (EDGE_API_VERIFICATION=headers); `route` its route is not a proven one (proven-routes.ts:
 * a balance, a list, a sum, an answer built from many reads).
 */
export type UnverifiedReason = 'range' | 'not-yet' | 'pruned' | 'headers-only' | 'route'

export type Verification =
  /** Proven: every store value the answer derives from verified against a verified app hash, and the answer checked against them. */
  | { readonly kind: 'verified', readonly keys: number }
  | { readonly kind: 'unverified', readonly reason: UnverifiedReason }
  /** The nodes' answers did not verify: never served as an answer (503). */
  | { readonly kind: 'failed' }

/** The header's value: `verified; keys=3`, `unverified; reason="range"`, `failed`. */
export function verificationHeader (verification: Verification): string {
  switch (verification.kind) {
    case 'verified': return `verified; keys=${verification.keys}`
    case 'unverified': return `unverified; reason="${verification.reason}"`
    case 'failed': return 'failed'
  }
}
