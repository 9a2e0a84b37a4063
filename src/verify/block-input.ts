import { BlockJsonError, decodeBlockJson } from '../cometbft/block-json.js'
import { ED25519_KEY_SIZE, type Commit } from '../cometbft/types.js'
import { commitProblem } from '../cometbft/validate-basic.js'
import { newValidatorSet, ValidatorSetError, type ValidatorInput } from '../cometbft/validator-set.js'
import { decodeBase64 } from '../wire/go-base64.js'
import type { Outcome } from './outcome.js'

// What a POST /v1/verify-block body says, decoded and checked as CometBFT would before its
// commit is verified: the block's header and last commit, and the supplied validator set
// (built once to refuse what NewValidatorSet refuses: one SHA-256 per validator and a sort,
// hundreds of milliseconds for 10,000 on a busy machine, hence done in the worker thread).
// The body has passed the route's schema; each failure is the 400 message it answers.

export interface VerifyBlockInput {
  readonly block: unknown
  readonly validators: ReadonlyArray<{ readonly pub_key: string, readonly voting_power: string | number }>
}

export interface PreparedBlock {
  readonly chainId: string
  readonly height: bigint
  readonly lastCommit: Commit
  readonly validators: readonly ValidatorInput[]
}

export function prepareBlock (input: VerifyBlockInput): Outcome<PreparedBlock> {
  let block
  try {
    block = decodeBlockJson(input.block)
  } catch (err) {
    return { ok: false, error: `invalid Block: ${(err as BlockJsonError).message}` }
  }
  const problem = commitProblem(block.lastCommit)
  if (problem !== undefined) return { ok: false, error: `invalid Block: last_commit: ${problem}` }
  const validators: ValidatorInput[] = []
  for (const [i, v] of input.validators.entries()) {
    const key = decodeBase64(v.pub_key)
    if (key?.length !== ED25519_KEY_SIZE) {
      return { ok: false, error: `Error decoding public key: validators[${i}].pub_key must be standard base64 of a ${ED25519_KEY_SIZE}-byte ed25519 key` }
    }
    validators.push({ pubKey: key, votingPower: BigInt(v.voting_power) })
  }
  try {
    newValidatorSet(validators)
  } catch (err) {
    return { ok: false, error: `invalid validators: ${(err as ValidatorSetError).message}` }
  }
  return { ok: true, value: { chainId: block.chainId, height: block.height, lastCommit: block.lastCommit as Commit, validators } }
}
