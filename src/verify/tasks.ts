import { parseClientJson } from './client-json.js'
import type { Commit } from '../cometbft/types.js'
import { ProofError, verifyValue, type ProofOp } from './ics23-proof.js'
import type { Outcome } from './outcome.js'
import { newValidatorSet, type ValidatorInput } from '../cometbft/validator-set.js'
import { verifyCommit } from './verify-commit.js'

// The verify routes' CPU work, each task a function from plain data to an Outcome: parsing a
// verify-block body and checking what it says, checking a commit's signatures, verifying an
// ICS23 proof. worker.ts
// runs them in the worker thread (workers.ts); the tests also run them inline.

/**
 * The JSON body of POST /v1/verify-block, parsed (client-json.ts: depth-checked, long
 * integers exact), keeping only what the route reads: the block's header and last commit,
 * and the validators. A real block carries its transactions too, megabytes of them; only
 * this part crosses back.
 */
export function parseBlockBody (json: Uint8Array): Outcome<unknown> {
  const parsed = parseClientJson(json)
  if (!parsed.ok) return parsed
  const body = parsed.value
  if (!isObject(body)) return { ok: true, value: body }
  const { block, validators } = body
  // Built fresh from named keys only: nothing of the client's object (a "__proto__" key
  // included) is carried over but the values the route reads.
  return {
    ok: true,
    value: {
      block: isObject(block) ? { header: block.header, last_commit: block.last_commit } : block,
      validators
    }
  }
}

export { prepareBlock } from './block-input.js'

export interface CommitTask {
  readonly chainId: string
  readonly commit: Commit
  readonly height: bigint
  /** The set that should have signed, as given (the set is built here: one SHA-256 per validator). */
  readonly validators: readonly ValidatorInput[]
}

/** What a commit check found: verified, a set CometBFT would refuse (`invalidSet`), or a commit that does not verify. */
export type CommitOutcome = Outcome | { readonly ok: false, readonly error: string, readonly invalidSet: true }

/** cometbft/validator-set.ts and verify-commit.ts's checks; failures carry CometBFT's messages. */
export function checkCommit (task: CommitTask): CommitOutcome {
  let set
  try {
    set = newValidatorSet(task.validators)
  } catch (err) {
    return { ok: false, error: (err as Error).message, invalidSet: true }
  }
  try {
    verifyCommit(task.chainId, task.commit, task.height, set)
    return { ok: true, value: undefined }
  } catch (err) {
    return { ok: false, error: (err as Error).message }
  }
}

export interface ProofTask {
  readonly ops: readonly ProofOp[]
  readonly root: Uint8Array
  readonly keyPath: string
  readonly value: Uint8Array
}

/** ics23-proof.ts's verifyValue; a proof that does not verify is an outcome with the Go runtime's message. */
export function verifyProof (task: ProofTask): Outcome {
  try {
    verifyValue(task.ops, task.root, task.keyPath, task.value)
    return { ok: true, value: undefined }
  } catch (err) {
    return { ok: false, error: (err as ProofError).message }
  }
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
