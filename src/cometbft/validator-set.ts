import { NamedError } from '../named-error.js'
import { consensusAddressBytes } from './address.js'
import { ED25519_KEY_SIZE, MAX_TOTAL_VOTING_POWER } from './types.js'

// A CometBFT validator set as types.NewValidatorSet builds it: addresses from the keys, the
// same refusals (duplicates, negative or zero power, a total over the cap), and the order a
// commit's signatures follow: voting power descending, then address ascending
// (ValidatorsByVotingPower). Powers are bigint: CometBFT's are int64, and the cap (2^63-1)/8
// is far beyond 2^53.

export interface ValidatorInput {
  /** Raw ed25519 public key, 32 bytes. */
  readonly pubKey: Uint8Array
  readonly votingPower: bigint
}

export interface Validator extends ValidatorInput {
  /** SHA-256(pubKey)[:20], CometBFT's address of an ed25519 key. */
  readonly address: Uint8Array
}

export interface ValidatorSet {
  /** In commit order: voting power descending, then address ascending. */
  readonly validators: readonly Validator[]
  readonly totalVotingPower: bigint
}

/** A set CometBFT would refuse to build; the message is CometBFT's. */
export class ValidatorSetError extends NamedError {}

export function newValidatorSet (inputs: readonly ValidatorInput[]): ValidatorSet {
  const byAddress = inputs.map((v) => {
    if (v.pubKey.length !== ED25519_KEY_SIZE) throw new ValidatorSetError('pubkey is incorrect size')
    return { ...v, address: consensusAddressBytes(v.pubKey) }
  }).sort((a, b) => Buffer.compare(a.address, b.address))

  const zero: Validator[] = []
  let total = 0n
  byAddress.forEach((v, i) => {
    const previous = byAddress[i - 1]
    if (previous !== undefined && Buffer.compare(previous.address, v.address) === 0) {
      throw new ValidatorSetError(`duplicate entry ${hex(v.address)}`)
    }
    if (v.votingPower < 0n) throw new ValidatorSetError(`voting power can't be negative: ${v.votingPower}`)
    if (v.votingPower > MAX_TOTAL_VOTING_POWER) {
      throw new ValidatorSetError(`to prevent clipping/overflow, voting power can't be higher than ${MAX_TOTAL_VOTING_POWER}, got ${v.votingPower}`)
    }
    if (v.votingPower === 0n) zero.push(v)
    total += v.votingPower
  })
  // A new set has nothing to remove, and power 0 means "remove" to CometBFT.
  if (zero.length > 0) throw new ValidatorSetError(`cannot process validators with voting power 0: [${zero.map((v) => hex(v.address)).join(' ')}]`)
  if (total > MAX_TOTAL_VOTING_POWER) throw new ValidatorSetError(`total voting power of resulting valset exceeds max ${MAX_TOTAL_VOTING_POWER}`)

  const validators = byAddress.sort((a, b) => {
    if (a.votingPower !== b.votingPower) return a.votingPower > b.votingPower ? -1 : 1
    return Buffer.compare(a.address, b.address)
  })
  return { validators, totalVotingPower: total }
}

function hex (bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').toUpperCase()
}
