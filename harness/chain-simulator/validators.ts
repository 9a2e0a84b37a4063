import type { KeyObject } from 'node:crypto'
import { newValidatorSet, type ValidatorSet } from '../../src/cometbft/validator-set.js'
import { simValidator } from './data/commits.js'

// The signed chain's validators (signed-chain.ts): a deterministic set per epoch, with the
// Ed25519 keys that sign its commits. Epoch e's members are the `count` validators named
// e .. e + count - 1, so each epoch change retires the oldest member and admits a new one,
// and each validator keeps its own power: a set change that a skipping light client can
// still follow (the trusted set's overlap with a set k epochs later is count - k members,
// more than a third for k < 2/3 of count) and that, skipped far enough, it cannot.
// Keys are node:crypto's (signing 100 votes a block stays cheap); Ed25519 is deterministic,
// so @noble/curves derives the same keys and signatures from the same seeds.

/** A set in CometBFT's commit order, with each member's signing key at the same index. */
export interface EpochSet {
  readonly set: ValidatorSet
  readonly keys: readonly KeyObject[]
}

/** How many validators a signed chain has unless told (a small set, as most tests want). */
export const DEFAULT_VALIDATORS = 4
/** CometBFT's own limit on the validators a gateway page lists is 100; a benchmark uses that many. */
export const MAX_VALIDATORS = 100

const cache = new Map<string, EpochSet>()

/** Validator `n`'s power: uneven (10 to 16), so the set's order is not just its addresses'. */
const powerOf = (n: number): bigint => 10n + BigInt(n % 7)

/** The set of `epoch` with `count` members (1 to MAX_VALIDATORS). */
export function epochSet (epoch: number, count: number): EpochSet {
  if (!Number.isInteger(count) || count < 1 || count > MAX_VALIDATORS) throw new RangeError(`a signed chain has 1 to ${MAX_VALIDATORS} validators, not ${count}`)
  const id = `${epoch}/${count}`
  const cached = cache.get(id)
  if (cached !== undefined) return cached
  const members = Array.from({ length: count }, (_, i) => simValidator(`chain-validator-${epoch + i}`, powerOf(epoch + i)))
  const set = newValidatorSet(members.map((m) => ({ pubKey: m.pubKey, votingPower: m.power })))
  const keys = set.validators.map((v) => (members.find((m) => m.address.equals(v.address)) as (typeof members)[number]).privateKey)
  const built = { set, keys }
  cache.set(id, built)
  return built
}
