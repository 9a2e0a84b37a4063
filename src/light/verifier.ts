import { timestampNanos, type Timestamp } from '../cometbft/timestamp.js'
import type { Header } from '../cometbft/types.js'
import type { ValidatorSet } from '../cometbft/validator-set.js'
import { verifyCommitLight, verifyCommitLightTrusting } from './commit-light.js'
import { headerHash } from './header-hash.js'
import type { LightBlock, LightOptions, TrustedState } from './light-block.js'
import { signedHeaderProblem } from './signed-header.js'
import { validatorSetHash } from './validator-set-hash.js'
import { LightVerificationError, verdictOf, type LightVerdict } from './verdict.js'

// One step of CometBFT's light client (light/verifier.go, v0.38): from a trusted state to an
// untrusted block, with no I/O and the clock passed in.
//
// Both kinds of step first check, in this order: the trusted header has not expired (its time
// plus the trusting period is after now); the untrusted signed header is well formed, of the
// trusted chain, and its commit names its hash (signed-header.ts); it is higher and later
// than the trusted one and not from the future beyond the clock drift; the sets given are the
// ones its validators_hash and next_validators_hash name. Then:
//
// - adjacent (height + 1): its validators_hash is the trusted header's next_validators_hash,
//   unless options.linkLastBlockId is false its last_block_id names the trusted header's hash (neither
//   CometBFT nor tendermint-rs checks it: see LightOptions), and more than 2/3 of its own set
//   signed it;
// - non-adjacent (skipping): more than the trust level (1/3) of the trusted next set signed it,
//   else not-enough-trust (bisect), and more than 2/3 of its own set.

const NS_PER_MS = 1_000_000n

/** Verifies `untrusted` one height above the trusted header. */
export function verifyAdjacent (trusted: TrustedState, untrusted: LightBlock, now: Timestamp, options: LightOptions): LightVerdict {
  const { header, commit } = untrusted.signedHeader
  if (header.height !== trusted.header.height + 1n) throw new Error(`headers must be adjacent in height: ${trusted.header.height} then ${header.height}`)
  return verdictOf(() => {
    checkNewHeaderAndSets(trusted, untrusted, now, options)
    if (!equal(header.validatorsHash, trusted.header.nextValidatorsHash)) {
      invalid(`expected old header next validators (${hex(trusted.header.nextValidatorsHash)}) to match those from new header (${hex(header.validatorsHash)})`)
    }
    if (options.linkLastBlockId !== false) checkLastBlockId(trusted.header, header)
    verifyCommitLight(trusted.header.chainId, commit.blockId, header.height, commit, untrusted.validators)
  })
}

/** Verifies `untrusted` more than one height above the trusted header (skipping). */
export function verifyNonAdjacent (trusted: TrustedState, untrusted: LightBlock, now: Timestamp, options: LightOptions): LightVerdict {
  const { header, commit } = untrusted.signedHeader
  if (header.height === trusted.header.height + 1n) throw new Error(`headers must be non adjacent in height: ${trusted.header.height} then ${header.height}`)
  return verdictOf(() => {
    checkNewHeaderAndSets(trusted, untrusted, now, options)
    verifyCommitLightTrusting(trusted.header.chainId, commit, trusted.nextValidators, options.trustLevel)
    verifyCommitLight(trusted.header.chainId, commit.blockId, header.height, commit, untrusted.validators)
  })
}

/** One step from `trusted` to `untrusted`, adjacent or skipping as their heights say. */
export function verifyLightBlock (trusted: TrustedState, untrusted: LightBlock, now: Timestamp, options: LightOptions): LightVerdict {
  const adjacent = untrusted.signedHeader.header.height === trusted.header.height + 1n
  return (adjacent ? verifyAdjacent : verifyNonAdjacent)(trusted, untrusted, now, options)
}

/** Whether a header verified at `header.time` is past the trusting period at `now` (light.HeaderExpired). */
export function headerExpired (header: Header, trustingPeriodMs: number, now: Timestamp): boolean {
  return timestampNanos(header.time) + BigInt(trustingPeriodMs) * NS_PER_MS <= timestampNanos(now)
}

function checkLastBlockId (trusted: Header, untrusted: Header): void {
  const trustedHash = headerHash(trusted) as Uint8Array
  if (!equal(untrusted.lastBlockId.hash, trustedHash)) {
    invalid(`new header's last block ID (${hex(untrusted.lastBlockId.hash)}) is not the trusted header (${hex(trustedHash)})`)
  }
}

function checkNewHeaderAndSets (trusted: TrustedState, untrusted: LightBlock, now: Timestamp, options: LightOptions): void {
  if (headerExpired(trusted.header, options.trustingPeriodMs, now)) {
    throw new LightVerificationError('expired', `old header has expired at ${expiry(trusted.header, options.trustingPeriodMs)} (now: ${iso(now)})`)
  }
  const { header } = untrusted.signedHeader
  const problem = signedHeaderProblem(untrusted.signedHeader, trusted.header.chainId)
  if (problem !== undefined) invalid(`untrustedHeader.ValidateBasic failed: ${problem}`)
  if (header.height <= trusted.header.height) invalid(`expected new header height ${header.height} to be greater than one of old header ${trusted.header.height}`)
  if (timestampNanos(header.time) <= timestampNanos(trusted.header.time)) {
    invalid(`expected new header time ${iso(header.time)} to be after old header time ${iso(trusted.header.time)}`)
  }
  if (timestampNanos(header.time) >= timestampNanos(now) + BigInt(options.maxClockDriftMs) * NS_PER_MS) {
    invalid(`new header has a time from the future ${iso(header.time)} (now: ${iso(now)}; max clock drift: ${options.maxClockDriftMs}ms)`)
  }
  checkSet('validators', header.validatorsHash, untrusted.validators, header.height)
  checkSet('next validators', header.nextValidatorsHash, untrusted.nextValidators, header.height)
}

function checkSet (which: string, named: Uint8Array, set: ValidatorSet, height: bigint): void {
  const hash = validatorSetHash(set)
  if (!equal(named, hash)) invalid(`expected new header ${which} (${hex(named)}) to match those that were supplied (${hex(hash)}) at height ${height}`)
}

function expiry (header: Header, trustingPeriodMs: number): string {
  const ns = timestampNanos(header.time) + BigInt(trustingPeriodMs) * NS_PER_MS
  return iso({ seconds: Number(ns / 1_000_000_000n), nanos: Number(ns % 1_000_000_000n) })
}

/** RFC 3339 in UTC with the nanoseconds there are, for messages. */
export function iso (time: Timestamp): string {
  const date = new Date(time.seconds * 1000).toISOString().slice(0, 19)
  return time.nanos === 0 ? `${date}Z` : `${date}.${String(time.nanos).padStart(9, '0').replace(/0+$/, '')}Z`
}

function equal (a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(a, b) === 0
}

function invalid (message: string): never {
  throw new LightVerificationError('invalid', message)
}

function hex (bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').toUpperCase()
}
