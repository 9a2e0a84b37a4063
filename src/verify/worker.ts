import type { VerifyBlockInput } from './block-input.js'
import { encodeOutcome } from './outcome.js'
import * as tasks from './tasks.js'

// The worker thread's module (workers.ts): each task of tasks.ts, its outcome sent back as
// bytes (outcome.ts says why).

export const parseBlockBody = (json: Uint8Array): Uint8Array => encodeOutcome(tasks.parseBlockBody(json))
export const prepareBlock = (input: VerifyBlockInput): Uint8Array => encodeOutcome(tasks.prepareBlock(input))
export const checkCommit = (task: tasks.CommitTask): Uint8Array => encodeOutcome(tasks.checkCommit(task))
export const verifyProof = (task: tasks.ProofTask): Uint8Array => encodeOutcome(tasks.verifyProof(task))
