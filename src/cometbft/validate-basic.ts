import { ZERO_TIME } from './timestamp.js'
import {
  ADDRESS_SIZE, BLOCK_PROTOCOL, BlockIdFlag, HASH_SIZE, isZeroBlockId, MAX_CHAIN_ID_LEN, MAX_SIGNATURE_SIZE,
  type BlockId, type Commit, type CommitSig, type HeaderBasics
} from './types.js'

// The checks CometBFT's BlockFromProto and CommitFromProto run before a block or commit is
// used (ValidateBasic of the header, the block ID, each commit signature and the commit), with
// CometBFT's messages. Each answers why CometBFT would refuse the value, or undefined.

/** Why CometBFT would refuse to decode the commit, in its words; undefined when it is well formed. */
export function commitProblem (commit: Commit | undefined): string | undefined {
  if (commit === undefined) return 'nil Commit'
  const blockId = blockIdProblem(commit.blockId)
  if (blockId !== undefined) return blockId
  for (const sig of commit.signatures) {
    const problem = commitSigProblem(sig)
    if (problem !== undefined) return problem
  }
  if (commit.height < 0n) return 'negative Height'
  if (commit.round < 0) return 'negative Round'
  if (commit.height >= 1n) {
    if (isZeroBlockId(commit.blockId)) return 'commit cannot be for nil block'
    if (commit.signatures.length === 0) return 'no signatures in commit'
  }
  return undefined
}

/** BlockID.ValidateBasic: both hashes empty or 32 bytes. */
export function blockIdProblem (blockId: BlockId): string | undefined {
  const partsHash = hashProblem(blockId.partSetHeader.hash)
  if (partsHash !== undefined) return `wrong Hash: ${partsHash}`
  if (hashProblem(blockId.hash) !== undefined) return 'wrong Hash'
  return undefined
}

/** What Header.ValidateBasic checks besides its hashes (hashProblem, blockIdProblem). */
export function headerProblem (header: HeaderBasics): string | undefined {
  if (header.blockProtocol !== BLOCK_PROTOCOL) return `block protocol is incorrect: got: ${header.blockProtocol}, want: ${BLOCK_PROTOCOL}`
  if (header.chainId.length > MAX_CHAIN_ID_LEN) return `chainID is too long; got: ${header.chainId.length}, max: ${MAX_CHAIN_ID_LEN}`
  if (header.height <= 0n) return 'zero or negative Height'
  if (header.proposerAddress.length !== ADDRESS_SIZE) return `invalid ProposerAddress length; got: ${header.proposerAddress.length}, expected: ${ADDRESS_SIZE}`
  return undefined
}

/** types.ValidateHash: a hash is empty or 32 bytes. */
export function hashProblem (hash: Uint8Array): string | undefined {
  return hash.length > 0 && hash.length !== HASH_SIZE ? `expected size to be ${HASH_SIZE} bytes, got ${hash.length} bytes` : undefined
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
