import type { Commit } from './commit.js'
import type { ValidatorSet } from './validator-set.js'
import { verifyCommit } from './verify-commit.js'

// What the verify routes do off the event loop, in the worker thread of workers.ts: parsing
// a large verify-block body and checking a commit's signatures. Each task returns its
// outcome as a value: only a copy crosses back from the worker, and an Error's class does not
// survive the copy. Both also run inline (small bodies; tests).

/** A task's outcome: its value, or the message of the error it ended with. */
export type Outcome<T = undefined> = { readonly ok: true, readonly value: T } | { readonly ok: false, readonly error: string }

/**
 * The JSON body of POST /v1/verify-block, parsed, keeping only what the route reads: the
 * block's header and last commit, and the validators. A real block carries its transactions
 * too, megabytes of them (JSON.parse costs ~3.5 ms per MiB here); only this part crosses back.
 */
export function parseBlockBody (json: Uint8Array | string): Outcome<unknown> {
  const text = typeof json === 'string' ? json : Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8')
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch (err) {
    return { ok: false, error: (err as SyntaxError).message }
  }
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

export interface CommitTask {
  readonly chainId: string
  readonly commit: Commit
  readonly height: bigint
  readonly set: ValidatorSet
}

/** verify-commit.ts's check; a commit that does not verify is an outcome with CometBFT's message. */
export function checkCommit (task: CommitTask): Outcome {
  try {
    verifyCommit(task.chainId, task.commit, task.height, task.set)
    return { ok: true, value: undefined }
  } catch (err) {
    return { ok: false, error: (err as Error).message }
  }
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
