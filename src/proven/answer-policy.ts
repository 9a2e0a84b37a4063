import type { VerificationMode } from '../config/verification-settings.js'
import { verificationHeader, type UnverifiedReason, type Verification } from './verification-header.js'

// What a route does with its answer in each mode (EDGE_API_VERIFICATION, docs/verified-reads.md
// "The modes"), given how proving it went: the one table, as a pure function, so every route
// acts alike. `off` serves as before, unmarked. `headers` serves every answer marked
// unverified (nothing is proven). `answers` serves proven answers as verified and the rest
// marked with the reason; an answer that failed (every node asked lied, or the answer
// disagrees with its proofs) is never served. `strict` serves only verified answers: anything
// else is a 503 naming the reason, never an unverified body.

/** How proving a route's answer went (answers and strict modes). */
export type ProvingOutcome =
  | { readonly kind: 'verified', readonly keys: number }
  /** Not proven, for a reason that is nobody's lie. */
  | { readonly kind: 'unproven', readonly reason: Exclude<UnverifiedReason, 'headers-only'> }
  /** Forged by every node asked, or the answer disagrees with its proofs. */
  | { readonly kind: 'failed', readonly detail: string }

export type AnswerAction =
  /** Serve the answer; `header`: the X-Verification value, none when off. */
  | { readonly serve: true, readonly header: string | undefined }
  | { readonly serve: false, readonly status: 503, readonly header: string, readonly message: string }

/** The action for an answer in `mode`; `outcome` is unused in off and headers (nothing is proven there). */
export function answerAction (mode: VerificationMode, outcome: ProvingOutcome): AnswerAction {
  if (mode === 'off') return { serve: true, header: undefined }
  if (mode === 'headers') return { serve: true, header: verificationHeader({ kind: 'unverified', reason: 'headers-only' }) }
  const verification = verificationOf(outcome)
  const header = verificationHeader(verification)
  if (outcome.kind === 'verified') return { serve: true, header }
  if (outcome.kind === 'failed') return { serve: false, status: 503, header, message: `no chain node gave an answer that verifies: ${outcome.detail}` }
  if (mode === 'answers') return { serve: true, header }
  return { serve: false, status: 503, header, message: `EDGE_API_VERIFICATION=strict serves only verified answers; this one is not (${outcome.reason})` }
}

function verificationOf (outcome: ProvingOutcome): Verification {
  switch (outcome.kind) {
    case 'verified': return { kind: 'verified', keys: outcome.keys }
    case 'unproven': return { kind: 'unverified', reason: outcome.reason }
    case 'failed': return { kind: 'failed' }
  }
}
