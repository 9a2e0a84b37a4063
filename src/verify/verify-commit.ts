import { setImmediate as nextTurn } from 'node:timers/promises'
import { BlockIdFlag, type Commit } from './commit.js'
import { verifyEd25519 } from './ed25519.js'
import { PRECOMMIT_TYPE, voteSignBytes } from './sign-bytes.js'
import type { ValidatorSet } from './validator-set.js'

// CometBFT's ValidatorSet.VerifyCommit, as the Go service called it for a block at `height`:
// VerifyCommit(chainID, commit.BlockID, height-1, commit). The commit must have one
// signature per validator, in the set's order; absent ones are skipped; commit and nil
// votes are both verified, but only commits count; the power that committed must exceed 2/3
// of the total, in integer arithmetic. Like CometBFT's batch path (the one it takes for
// ed25519 sets), the power is tallied before any signature is checked, so a commit that
// could never pass costs no cryptography.
//
// CPU: about 0.13 ms per signature. The loop yields to the event loop whenever it has run
// for `sliceMs`, so a 100-validator commit (~13-15 ms) never holds it for long, and it stops
// at the next yield when `signal` aborts (the client went away).

/** Why the commit does not verify; the message is CometBFT's (the Go service logged it). */
export class CommitVerificationError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'CommitVerificationError'
  }
}

export interface VerifyCommitOptions {
  /** Longest run of signature checks between two yields to the event loop. @default 5 */
  readonly sliceMs?: number
  readonly signal?: AbortSignal | undefined
}

export const DEFAULT_SLICE_MS = 5

export async function verifyCommit (chainId: string, commit: Commit, height: bigint, set: ValidatorSet, options: VerifyCommitOptions = {}): Promise<void> {
  const { validators, totalVotingPower } = set
  const { signatures } = commit
  if (validators.length !== signatures.length) {
    throw new CommitVerificationError(`invalid commit -- wrong set size: ${validators.length} vs ${signatures.length}`)
  }
  if (commit.height !== height - 1n) {
    throw new CommitVerificationError(`invalid commit -- wrong height: ${height - 1n} vs ${commit.height}`)
  }

  const needed = totalVotingPower * 2n / 3n
  let tallied = 0n
  signatures.forEach((sig, i) => {
    if (sig.blockIdFlag === BlockIdFlag.Commit) tallied += (validators[i] as ValidatorSet['validators'][number]).votingPower
  })
  if (tallied <= needed) {
    throw new CommitVerificationError(`invalid commit -- insufficient voting power: got ${tallied}, needed more than ${needed}`)
  }

  const sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS
  let sliceStart = performance.now()
  for (const [i, sig] of signatures.entries()) {
    if (sig.blockIdFlag === BlockIdFlag.Absent) continue
    if (performance.now() - sliceStart >= sliceMs) {
      await nextTurn()
      options.signal?.throwIfAborted()
      sliceStart = performance.now()
    }
    const message = voteSignBytes({
      type: PRECOMMIT_TYPE,
      height: commit.height,
      round: commit.round,
      // A nil vote is for no block (CometBFT's CommitSig.BlockID).
      blockId: sig.blockIdFlag === BlockIdFlag.Commit ? commit.blockId : undefined,
      timestamp: sig.timestamp,
      chainId
    })
    const validator = validators[i] as ValidatorSet['validators'][number]
    if (!verifyEd25519(validator.pubKey, message, sig.signature)) {
      throw new CommitVerificationError(`wrong signature (#${i}): ${Buffer.from(sig.signature).toString('hex').toUpperCase()}`)
    }
  }
}
