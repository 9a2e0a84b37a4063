import type { Timestamp } from './timestamp.js'

// CometBFT's types (v0.38) as this service reads them, with the constants their ValidateBasic
// checks use: one home for both the epoch-participants block (block-from-proto.ts) and the
// verify routes (block-json.ts, validate-basic.ts, validator-set.ts, sign-bytes.ts), which run
// in the verify worker thread. Nothing here imports the app.

/** version.BlockProtocol: the only block version v0.38 accepts. */
export const BLOCK_PROTOCOL = 11n
/** types.MaxChainIDLen. */
export const MAX_CHAIN_ID_LEN = 50
/** crypto.AddressSize: a consensus address is SHA-256(key)[:20]. */
export const ADDRESS_SIZE = 20
/** tmhash.Size: a hash is empty or 32 bytes. */
export const HASH_SIZE = 32
/** types.MaxSignatureSize (the ed25519 signature size). */
export const MAX_SIGNATURE_SIZE = 64
export const ED25519_KEY_SIZE = 32
/** types.MaxTotalVotingPower: int64 max / 8, so proposer priorities never overflow. */
export const MAX_TOTAL_VOTING_POWER = (2n ** 63n - 1n) / 8n

/** types.BlockIDFlag: what a validator's commit signature is for. */
export const BlockIdFlag = { Absent: 1, Commit: 2, Nil: 3 } as const

/** types.SignedMsgType. */
export const SignedMsgType = { Prevote: 1, Precommit: 2, Proposal: 32 } as const

/** The chain gateway's protojson names of an enum's values: BLOCK_ID_FLAG_COMMIT, with 0 as _UNKNOWN. */
function protojsonNames (prefix: string, values: Readonly<Record<string, number>>): Readonly<Record<string, number>> {
  return Object.fromEntries(Object.entries({ Unknown: 0, ...values }).map(([name, n]) => [`${prefix}_${name.toUpperCase()}`, n]))
}

export const BLOCK_ID_FLAG_NAMES = protojsonNames('BLOCK_ID_FLAG', BlockIdFlag)
export const SIGNED_MSG_TYPE_NAMES = protojsonNames('SIGNED_MSG_TYPE', SignedMsgType)

export interface PartSetHeader {
  readonly total: number
  readonly hash: Uint8Array
}

export interface BlockId {
  readonly hash: Uint8Array
  readonly partSetHeader: PartSetHeader
}

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

/** version.Consensus: the block and app protocol versions a header names. */
export interface ConsensusVersion {
  readonly block: bigint
  readonly app: bigint
}

/** types.Header: every field its hash commits to (src/light/header-hash.ts). Hashes are empty or 32 bytes. */
export interface Header {
  readonly version: ConsensusVersion
  readonly chainId: string
  readonly height: bigint
  readonly time: Timestamp
  readonly lastBlockId: BlockId
  readonly lastCommitHash: Uint8Array
  readonly dataHash: Uint8Array
  readonly validatorsHash: Uint8Array
  readonly nextValidatorsHash: Uint8Array
  readonly consensusHash: Uint8Array
  readonly appHash: Uint8Array
  readonly lastResultsHash: Uint8Array
  readonly evidenceHash: Uint8Array
  readonly proposerAddress: Uint8Array
}

/** types.SignedHeader: a header and the commit for it (from the next block's last_commit, or RPC /commit). */
export interface SignedHeader {
  readonly header: Header
  readonly commit: Commit
}

/** The header fields Header.ValidateBasic checks, besides its hashes. */
export interface HeaderBasics {
  readonly blockProtocol: bigint
  readonly chainId: string
  readonly height: bigint
  readonly proposerAddress: Uint8Array
}

/** What verifying a block's last commit needs from the block. */
export interface BlockWithCommit {
  readonly chainId: string
  readonly height: bigint
  /** undefined when the block has none (CometBFT's "nil Commit"). */
  readonly lastCommit: Commit | undefined
}

/** A BlockID with no hash and an empty part set header: what nil and absent votes are for. */
export function isZeroBlockId (id: BlockId): boolean {
  return id.hash.length === 0 && id.partSetHeader.total === 0 && id.partSetHeader.hash.length === 0
}

/** The number of a protojson enum name; undefined for anything else (the gateway writes a number for a value it does not know). */
export function enumByName (value: unknown, names: Readonly<Record<string, number>>): number | undefined {
  if (typeof value === 'string' && Object.hasOwn(names, value)) return names[value] as number
  return undefined
}
