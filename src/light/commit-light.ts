import { PRECOMMIT_TYPE, voteSignBytes } from '../cometbft/sign-bytes.js'
import { BlockIdFlag, type BlockId, type Commit } from '../cometbft/types.js'
import type { Validator, ValidatorSet } from '../cometbft/validator-set.js'
import { verifyEd25519 } from '../verify/ed25519.js'
import { LightVerificationError } from './verdict.js'

// The two commit checks of CometBFT's light client (types/validation.go, v0.38), which count
// only votes for the block (BlockIDFlagCommit) and stop verifying signatures as soon as the
// tally is past what is needed: a light client proves "enough signed", never "who else did".
//
// - verifyCommitLight: the commit's own set signed it: the set lines up with the signatures by
//   index, and more than 2/3 of its power must sign. Used for every block the client accepts.
// - verifyCommitLightTrusting: a set trusted earlier signed it: signers are found by address
//   (the new block's set may differ), each validator counts once, and more than trustLevel
//   (1/3 by default) of the trusted set's power must sign. A third of honest power can be
//   wrong only if a third is corrupt, which the trusting period bounds (light/verifier.go).
//
// The thresholds are CometBFT's integer arithmetic: power > floor(total * n / d).

/** A fraction of a set's voting power, as CometBFT's cmtmath.Fraction. */
export interface Fraction {
  readonly numerator: bigint
  readonly denominator: bigint
}

/** light.DefaultTrustLevel. */
export const DEFAULT_TRUST_LEVEL: Fraction = { numerator: 1n, denominator: 3n }

const TWO_THIRDS: Fraction = { numerator: 2n, denominator: 3n }

export function verifyCommitLight (chainId: string, blockId: BlockId, height: bigint, commit: Commit, set: ValidatorSet): void {
  const { validators } = set
  const { signatures } = commit
  if (validators.length !== signatures.length) invalid(`invalid commit -- wrong set size: ${validators.length} vs ${signatures.length}`)
  if (commit.height !== height) invalid(`invalid commit -- wrong height: ${height} vs ${commit.height}`)
  if (!sameBlockId(blockId, commit.blockId)) invalid('invalid commit -- wrong block ID')
  tally(chainId, commit, set, TWO_THIRDS, (i) => {
    const validator = validators[i] as Validator
    // CometBFT reads the signer by index; a signature claiming another address is not that
    // validator's, whatever it verifies against (tendermint-rs refuses it as a faulty signer).
    if (Buffer.compare(validator.address, signatures[i]?.validatorAddress as Uint8Array) !== 0) {
      invalid(`wrong validator address in signature #${i}: ${hex(signatures[i]?.validatorAddress as Uint8Array)}, the set's is ${hex(validator.address)}`)
    }
    return validator
  }, 'invalid')
}

export function verifyCommitLightTrusting (chainId: string, commit: Commit, trusted: ValidatorSet, trustLevel: Fraction): void {
  // light.ValidateTrustLevel: below 1/3 a corrupt third could pass; a misconfiguration, not a verdict.
  if (trustLevel.denominator <= 0n || trustLevel.numerator * 3n < trustLevel.denominator || trustLevel.numerator > trustLevel.denominator) {
    throw new Error(`trust level must be within [1/3, 1], given ${trustLevel.numerator}/${trustLevel.denominator}`)
  }
  const byAddress = new Map(trusted.validators.map((v, i) => [hex(v.address), i]))
  const seen = new Map<number, number>()
  tally(chainId, commit, trusted, trustLevel, (i) => {
    const index = byAddress.get(hex(commit.signatures[i]?.validatorAddress as Uint8Array))
    if (index === undefined) return undefined
    const first = seen.get(index)
    if (first !== undefined) invalid(`double vote from ${hex((trusted.validators[index] as Validator).address)} (${first} and ${i})`)
    seen.set(index, i)
    return trusted.validators[index] as Validator
  }, 'not-enough-trust')
}

/**
 * Adds the power of each commit vote's validator (`signer`: undefined when the set has none)
 * after checking its signature, until it is past `level` of the set's total. Too little power
 * is `short`'s kind of failure; a bad signature is always invalid.
 */
function tally (chainId: string, commit: Commit, set: ValidatorSet, level: Fraction, signer: (i: number) => Validator | undefined, short: 'invalid' | 'not-enough-trust'): void {
  const needed = set.totalVotingPower * level.numerator / level.denominator
  let tallied = 0n
  for (const [i, sig] of commit.signatures.entries()) {
    if (sig.blockIdFlag !== BlockIdFlag.Commit) continue
    const validator = signer(i)
    if (validator === undefined) continue
    const message = voteSignBytes({ type: PRECOMMIT_TYPE, height: commit.height, round: commit.round, blockId: commit.blockId, timestamp: sig.timestamp, chainId })
    if (!verifyEd25519(validator.pubKey, message, sig.signature)) invalid(`wrong signature (#${i}): ${hex(sig.signature)}`)
    tallied += validator.votingPower
    if (tallied > needed) return
  }
  throw new LightVerificationError(short, `invalid commit -- insufficient voting power: got ${tallied}, needed more than ${needed}`)
}

function sameBlockId (a: BlockId, b: BlockId): boolean {
  return Buffer.compare(a.hash, b.hash) === 0 && a.partSetHeader.total === b.partSetHeader.total &&
    Buffer.compare(a.partSetHeader.hash, b.partSetHeader.hash) === 0
}

function invalid (message: string): never {
  throw new LightVerificationError('invalid', message)
}

function hex (bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').toUpperCase()
}
