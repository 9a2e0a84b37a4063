import { createHash, sign } from 'node:crypto'
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire'
import { PRECOMMIT_TYPE, voteSignBytes } from '../../src/cometbft/sign-bytes.js'
import { ZERO_TIME, type Timestamp } from '../../src/cometbft/timestamp.js'
import { BlockIdFlag, type BlockId, type Commit, type CommitSig, type Header } from '../../src/cometbft/types.js'
import type { Validator, ValidatorSet } from '../../src/cometbft/validator-set.js'
import { headerHash } from '../../src/light/header-hash.js'
import { merkleRoot } from '../../src/light/merkle.js'
import { validatorSetHash } from '../../src/light/validator-set-hash.js'
import { CHAIN_ID } from './data/commits.js'
import { LATEST_HEIGHT, POC_START } from './data/epochs.js'
import { storeEntries } from './data/store.js'
import { storeProof } from './store-proof.js'
import { DEFAULT_VALIDATORS, epochSet, type EpochSet } from './validators.js'

// The simulated chain as CometBFT would have made it: every height a real header, chained
// (last_block_id is the previous header's hash and part set header, last_commit_hash the
// previous commit's hash), naming its validator set and the next one by hash, with the app
// hash of the state after the previous block (the root the simulator's ICS23 proofs at
// height - 1 verify to: store-proof.ts), and a commit for it signed by its set. Sets change
// at epochs (validators.ts); the set of the block after a change is named as
// next_validators_hash one block ahead, as CometBFT does.
//
// A fork (lies.ts) is a branch of the same chain from a height on: its headers commit to
// another app hash and are signed by less than a third of the power, the most a light client
// must survive. Blocks are built on first use and kept: a block needs the one before it, so
// a chain starts at `firstHeight` (below it nothing is served, as on a pruned node).

export interface SignedChainOptions {
  readonly chainId?: string
  /** Validators per set, 1 to 100. @default 4 */
  readonly validators?: number
  /** Blocks per epoch; sets change at POC_START + k * epochLength. @default 20 */
  readonly epochLength?: number
  /** The lowest height the chain has. @default LATEST_HEIGHT - 200 */
  readonly firstHeight?: number
  /** The time of firstHeight, ms since 1970. @default a day ago: recent enough to trust, never from the future */
  readonly startMs?: number
  /** Time between blocks. @default 1000 ms */
  readonly blockMs?: number
}

/** A header, its block ID and the commit for it (what the next block's last_commit carries). */
export interface ChainBlock {
  readonly header: Header
  readonly blockId: BlockId
  readonly commit: Commit
}

const DAY_MS = 24 * 3600 * 1000
const sha256 = (...parts: Uint8Array[]): Buffer => {
  const hash = createHash('sha256')
  for (const part of parts) hash.update(part)
  return hash.digest()
}
const EMPTY_HASH = merkleRoot([])
const CONSENSUS_HASH = sha256(Buffer.from('consensus params'))

export class SignedChain {
  readonly chainId: string
  readonly validators: number
  readonly epochLength: number
  readonly firstHeight: number
  readonly startMs: number
  readonly blockMs: number
  // Built blocks by branch ('' the honest chain, else the fork's first height) and height.
  readonly #blocks = new Map<string, Map<number, ChainBlock>>()

  constructor (options: SignedChainOptions = {}) {
    this.chainId = options.chainId ?? CHAIN_ID
    this.validators = options.validators ?? DEFAULT_VALIDATORS
    this.epochLength = options.epochLength ?? 20
    this.firstHeight = options.firstHeight ?? LATEST_HEIGHT - 200
    this.startMs = options.startMs ?? Math.floor((Date.now() - DAY_MS) / 1000) * 1000
    this.blockMs = options.blockMs ?? 1000
  }

  epochOf (height: number): number {
    return Math.floor((height - POC_START) / this.epochLength)
  }

  /** The set that signs `height`, with its keys. */
  setAt (height: number): EpochSet {
    return epochSet(this.epochOf(height), this.validators)
  }

  validatorSet (height: number): ValidatorSet {
    return this.setAt(height).set
  }

  timeOf (height: number): Timestamp {
    const ms = this.startMs + (height - this.firstHeight) * this.blockMs
    return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 }
  }

  /** The block at `height` (>= firstHeight) on the honest chain, or on the fork from `forkFrom`. */
  block (height: number, forkFrom?: number): ChainBlock {
    if (height < this.firstHeight) throw new RangeError(`the chain starts at ${this.firstHeight}, not ${height}`)
    if (forkFrom === undefined || height < forkFrom) return this.#build('', height, () => this.#honest(height))
    return this.#build(String(forkFrom), height, () => this.#forked(height, forkFrom))
  }

  /** The app hash of block `height`: the multistore root of the state after height - 1. */
  appHashOf (height: number): Buffer {
    return storeProof(storeEntries(BigInt(height - 1)), BigInt(height - 1)).appHash
  }

  #build (branch: string, height: number, make: () => ChainBlock): ChainBlock {
    let blocks = this.#blocks.get(branch)
    if (blocks === undefined) this.#blocks.set(branch, blocks = new Map())
    let block = blocks.get(height)
    if (block === undefined) blocks.set(height, block = make())
    return block
  }

  #honest (height: number): ChainBlock {
    const previous = height === this.firstHeight ? undefined : this.#previous(height, undefined)
    const header = this.#header(height, previous, this.appHashOf(height))
    return this.#signed(header, this.setAt(height), () => true)
  }

  /** A fork block: another app hash, chained on the fork, signed by the lightest members under a third of the power. */
  #forked (height: number, forkFrom: number): ChainBlock {
    const previous = this.#previous(height, height === forkFrom ? undefined : forkFrom)
    const header = this.#header(height, previous, sha256(Buffer.from('forged state'), this.appHashOf(height)))
    const signers = this.setAt(height)
    const minority = minorityOf(signers.set)
    return this.#signed(header, signers, (i) => i >= minority)
  }

  /** The block before `height` on the branch, built bottom-up so no recursion is deep. */
  #previous (height: number, forkFrom: number | undefined): ChainBlock {
    const blocks = this.#blocks.get(forkFrom === undefined ? '' : String(forkFrom))
    const base = forkFrom === undefined ? this.firstHeight : forkFrom
    let from = height - 1
    while (from > base && blocks?.has(from - 1) !== true) from--
    for (let h = from; h < height - 1; h++) this.block(h, forkFrom)
    return this.block(height - 1, forkFrom)
  }

  #header (height: number, previous: ChainBlock | undefined, appHash: Uint8Array): Header {
    const { set } = this.setAt(height)
    return {
      version: { block: 11n, app: 0n },
      chainId: this.chainId,
      height: BigInt(height),
      time: this.timeOf(height),
      // The first block has nothing before it here; a fixed ID stands for the pruned history.
      lastBlockId: previous?.blockId ?? { hash: sha256(Buffer.from(`before ${height}`)), partSetHeader: { total: 1, hash: sha256(Buffer.from(`parts before ${height}`)) } },
      lastCommitHash: previous === undefined ? EMPTY_HASH : commitHash(previous.commit),
      dataHash: EMPTY_HASH, // no transactions
      validatorsHash: validatorSetHash(set),
      nextValidatorsHash: validatorSetHash(this.validatorSet(height + 1)),
      consensusHash: CONSENSUS_HASH,
      appHash,
      lastResultsHash: EMPTY_HASH,
      evidenceHash: EMPTY_HASH,
      proposerAddress: (set.validators[height % set.validators.length] as Validator).address
    }
  }

  /** The header with its block ID and a commit in which the members `signs` picks (by index) sign; the others are absent. */
  #signed (header: Header, { set, keys }: EpochSet, signs: (index: number) => boolean): ChainBlock {
    const hash = headerHash(header) as Uint8Array
    const blockId = { hash, partSetHeader: { total: 1, hash: sha256(Buffer.from('parts'), hash) } }
    const voteMs = this.startMs + (Number(header.height) - this.firstHeight) * this.blockMs + Math.floor(this.blockMs / 2)
    const signatures = set.validators.map((v, i): CommitSig => {
      if (!signs(i)) return { blockIdFlag: BlockIdFlag.Absent, validatorAddress: new Uint8Array(), timestamp: ZERO_TIME, signature: new Uint8Array() }
      // Each vote at its own time, nanoseconds included: they are inside what is signed.
      const timestamp = { seconds: Math.floor(voteMs / 1000), nanos: (voteMs % 1000) * 1_000_000 + i + 1 }
      const message = voteSignBytes({ type: PRECOMMIT_TYPE, height: header.height, round: 0, blockId, timestamp, chainId: this.chainId })
      return { blockIdFlag: BlockIdFlag.Commit, validatorAddress: v.address, timestamp, signature: sign(null, message, keys[i] as (typeof keys)[number]) }
    })
    return { header, blockId, commit: { height: header.height, round: 0, blockId, signatures } }
  }
}

/** The index from which the set's last (lightest) members hold less than a third of its power (none when the lightest alone holds a third). */
export function minorityOf (set: ValidatorSet): number {
  let power = 0n
  let from = set.validators.length
  while (from > 0 && (power + (set.validators[from - 1] as Validator).votingPower) * 3n < set.totalVotingPower) {
    from--
    power += (set.validators[from] as Validator).votingPower
  }
  return from
}

/** Commit.Hash: the merkle root of each CommitSig, proto-encoded (block_id_flag, validator_address, timestamp always, signature). */
export function commitHash (commit: Commit): Uint8Array {
  return merkleRoot(commit.signatures.map((s) => {
    const w = new BinaryWriter()
    w.tag(1, WireType.Varint).int32(s.blockIdFlag)
    if (s.validatorAddress.length > 0) w.tag(2, WireType.LengthDelimited).bytes(s.validatorAddress)
    w.tag(3, WireType.LengthDelimited).fork()
    if (s.timestamp.seconds !== 0) w.tag(1, WireType.Varint).int64(s.timestamp.seconds)
    if (s.timestamp.nanos !== 0) w.tag(2, WireType.Varint).int32(s.timestamp.nanos)
    w.join()
    if (s.signature.length > 0) w.tag(4, WireType.LengthDelimited).bytes(s.signature)
    return w.finish()
  }))
}
