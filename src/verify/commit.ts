import { isZeroBlockId, type BlockId } from './sign-bytes.js'
import { ZERO_TIME, type Timestamp } from './timestamp.js'

// A block's last commit, the validators' precommits for the previous height, and the checks
// CometBFT's CommitFromProto runs on one before anything is verified (ValidateBasic of the
// block ID, of each signature and of the commit), with CometBFT's messages.

/** types.BlockIDFlag: what a validator's commit signature is for. */
export const BlockIdFlag = { Absent: 1, Commit: 2, Nil: 3 } as const

/** CometBFT's MaxSignatureSize (the ed25519 signature size, 64). */
const MAX_SIGNATURE_SIZE = 64
const ADDRESS_SIZE = 20
const HASH_SIZE = 32

export interface CommitSig {
  readonly blockIdFlag: number
  readonly validatorAddress: Uint8Array
  readonly timestamp: Timestamp
  readonly signature: Uint8Array
}

export interface Commit {
  readonly height: bigint
  readonly round: number
  readonly blockId: BlockId
  readonly signatures: readonly CommitSig[]
}

/** What verifying a block's last commit needs from the block. */
export interface BlockWithCommit {
  readonly chainId: string
  readonly height: bigint
  /** undefined when the block has none (CometBFT's "nil Commit"). */
  readonly lastCommit: Commit | undefined
}

/** Why CometBFT would refuse to decode the commit, in its words; undefined when it is well formed. */
export function commitProblem (commit: Commit | undefined): string | undefined {
  if (commit === undefined) return 'nil Commit'
  const { blockId } = commit
  const partsHash = hashSizeProblem(blockId.partSetHeader.hash)
  if (partsHash !== undefined) return `wrong Hash: ${partsHash}`
  if (hashSizeProblem(blockId.hash) !== undefined) return 'wrong Hash'
  for (const sig of commit.signatures) {
    const problem = commitSigProblem(sig)
    if (problem !== undefined) return problem
  }
  if (commit.height < 0n) return 'negative Height'
  if (commit.round < 0) return 'negative Round'
  if (commit.height >= 1n) {
    if (isZeroBlockId(blockId)) return 'commit cannot be for nil block'
    if (commit.signatures.length === 0) return 'no signatures in commit'
  }
  return undefined
}

function commitSigProblem (sig: CommitSig): string | undefined {
  switch (sig.blockIdFlag) {
    case BlockIdFlag.Absent:
      if (sig.validatorAddress.length !== 0) return 'validator address is present'
      if (sig.timestamp.seconds !== ZERO_TIME.seconds || sig.timestamp.nanos !== 0) return 'time is present'
      if (sig.signature.length !== 0) return 'signature is present'
      return undefined
    case BlockIdFlag.Commit:
    case BlockIdFlag.Nil:
      if (sig.validatorAddress.length !== ADDRESS_SIZE) {
        return `expected ValidatorAddress size to be ${ADDRESS_SIZE} bytes, got ${sig.validatorAddress.length} bytes`
      }
      if (sig.signature.length === 0) return 'signature is missing'
      if (sig.signature.length > MAX_SIGNATURE_SIZE) return `signature is too big (max: ${MAX_SIGNATURE_SIZE})`
      return undefined
    default:
      return `unknown BlockIDFlag: ${sig.blockIdFlag}`
  }
}

function hashSizeProblem (hash: Uint8Array): string | undefined {
  return hash.length > 0 && hash.length !== HASH_SIZE ? `expected size to be ${HASH_SIZE} bytes, got ${hash.length} bytes` : undefined
}
