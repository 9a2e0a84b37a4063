import type { Static } from 'typebox'
import { NamedError } from '../named-error.js'
import { base64OrNull, bytesOf, hexUpper, rfc3339Nano } from '../wire/encoding-json.js'
import { int64 } from '../wire/schema.js'
import { type BlockID, type CometBlockJson, type CometProofOps, type Commit, type Evidence, type Header, type LightBlock, type Validator, type Vote } from './comet-json-schema.js'
import { parseTimestamp, ZERO_TIME } from './timestamp.js'
import { BLOCK_ID_FLAG_NAMES, enumByName, SIGNED_MSG_TYPE_NAMES, type BlockId as BlockIdFields, type CommitSig as CommitSigFields } from './types.js'
import { blockIdProblem, commitProblem, hashProblem, headerProblem } from './validate-basic.js'

// The block in /v1/epochs/{epoch}/participants, as the newest Go edge-api writes it:
// comettypes.BlockFromProto(GetBlockByHeight().Block) through encoding/json
// (zpoken/gonka common/queryapi/epoch.go@ef1a5efd, "Legacy dapi returned the native comet
// types.Block via encoding/json"; golden file tests/testdata/dapi_epoch_participants_golden.json
// @ef1a5efd; CometBFT v0.38 types/block.go, per edge-api/go.mod@89ff8bdb). So: int64 as JSON
// numbers, HexBytes (hashes, addresses) as upper-case hex ("" when empty), []byte
// (signatures, txs) as base64 (null when empty), times as RFC3339Nano, BlockIDFlag and
// SignedMsgType as numbers, keys in the Go structs' order.
//
// The input is the chain gateway's `block` (tendermint.types.Block in protojson), the same
// message Go converts; `sdk_block` (bech32 proposer) is not used, as Go does not use it.

type Obj = Record<string, unknown>
const obj = (value: unknown): Obj => (typeof value === 'object' && value !== null ? value as Obj : {})
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const int = (value: unknown): number => Number(int64(value))
/** A message field: null when unset (a nil pointer in Go), else converted. */
const orNull = <T> (value: unknown, convert: (value: unknown) => T): T | null => (value === null || value === undefined ? null : convert(value))

/** comettypes.BlockFromProto refused the block: Go then leaves `block` out of the answer. */
export class InvalidBlockError extends NamedError {}

/**
 * The gateway's `block` as Go's comettypes.BlockFromProto + encoding/json writes it. Throws
 * InvalidBlockError where BlockFromProto returns no block: a header, block id or last commit
 * that fails CometBFT's ValidateBasic, or evidence of an unknown kind. (A block the chain
 * committed always passes; the checks keep a broken gateway answer from being passed on.)
 * Evidence is converted but not validated further: a committed block only holds valid evidence.
 */
export function cometBlockFromGateway (block: unknown): CometBlockJson {
  const b = obj(block)
  const data = obj(b.data)
  const lastCommit = orNull(b.last_commit, commit)
  return {
    header: header(b.header, true),
    data: { txs: list(data.txs).map((tx) => bytesOf(tx).toString('base64')) },
    evidence: { evidence: list(obj(b.evidence).evidence).map(evidence) },
    last_commit: lastCommit
  }
}

function header (value: unknown, validate: boolean): Static<typeof Header> {
  const h = obj(value)
  const version = obj(h.version)
  const out: Static<typeof Header> = {
    version: omitZero({ block: int64(version.block), app: int64(version.app) }),
    chain_id: typeof h.chain_id === 'string' ? h.chain_id : '',
    height: int64(h.height),
    time: rfc3339Nano(h.time),
    last_block_id: blockId(h.last_block_id),
    last_commit_hash: hash(h.last_commit_hash, 'LastCommitHash'),
    data_hash: hash(h.data_hash, 'DataHash'),
    validators_hash: hash(h.validators_hash, 'ValidatorsHash'),
    next_validators_hash: hash(h.next_validators_hash, 'NextValidatorsHash'),
    consensus_hash: hash(h.consensus_hash, 'ConsensusHash'),
    // The app hash may have any length (CometBFT: "AppHash is arbitrary length").
    app_hash: hexUpper(h.app_hash),
    last_results_hash: hash(h.last_results_hash, 'LastResultsHash'),
    evidence_hash: hash(h.evidence_hash, 'EvidenceHash'),
    proposer_address: hexUpper(h.proposer_address)
  }
  if (validate) {
    refuse(headerProblem({
      blockProtocol: BigInt(out.version.block ?? 0),
      chainId: out.chain_id,
      height: BigInt(out.height),
      proposerAddress: bytesOf(h.proposer_address)
    }))
  }
  return out
}

/** cmtversion.Consensus fields are omitempty. */
function omitZero (version: { block: number | bigint, app: number | bigint }): Static<typeof Header>['version'] {
  return {
    ...(version.block !== 0 ? { block: version.block } : {}),
    ...(version.app !== 0 ? { app: version.app } : {})
  }
}

/** A validation's problem, if any, as the InvalidBlockError BlockFromProto would return. */
function refuse (problem: string | undefined): void {
  if (problem !== undefined) throw new InvalidBlockError(problem)
}

/** A header hash (types.ValidateHash: empty or 32 bytes), as upper-case hex. */
function hash (value: unknown, what: string): string {
  const bytes = bytesOf(value)
  const problem = hashProblem(bytes)
  if (problem !== undefined) throw new InvalidBlockError(`wrong ${what}: ${problem}`)
  return hexOf(bytes)
}

/** BlockIDFromProto, with BlockID.ValidateBasic: the protojson part_set_header becomes `parts`. */
function blockId (value: unknown): Static<typeof BlockID> {
  const id = blockIdFields(value)
  refuse(blockIdProblem(id))
  return { hash: hexOf(id.hash), parts: { total: id.partSetHeader.total, hash: hexOf(id.partSetHeader.hash) } }
}

function blockIdFields (value: unknown): BlockIdFields {
  const id = obj(value)
  const parts = obj(id.part_set_header)
  return { hash: bytesOf(id.hash), partSetHeader: { total: int(parts.total), hash: bytesOf(parts.hash) } }
}

const hexOf = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex').toUpperCase()

/** CommitFromProto, with Commit.ValidateBasic. */
function commit (value: unknown): Static<typeof Commit> {
  const c = obj(value)
  const signatures = list(c.signatures).map(obj)
  refuse(commitProblem({
    height: BigInt(int64(c.height)),
    round: int(c.round),
    blockId: blockIdFields(c.block_id),
    signatures: signatures.map(commitSigFields)
  }))
  return {
    height: int64(c.height),
    round: int(c.round),
    block_id: blockId(c.block_id),
    signatures: signatures.map((s) => ({
      block_id_flag: enumNumber(s.block_id_flag, BLOCK_ID_FLAG_NAMES),
      validator_address: hexUpper(s.validator_address),
      timestamp: rfc3339Nano(s.timestamp),
      signature: base64OrNull(s.signature)
    }))
  }
}

/** A protojson CommitSig as CometBFT holds it; an absent or unreadable time is Go's zero time (as rfc3339Nano). */
function commitSigFields (s: Obj): CommitSigFields {
  return {
    blockIdFlag: enumNumber(s.block_id_flag, BLOCK_ID_FLAG_NAMES),
    validatorAddress: bytesOf(s.validator_address),
    timestamp: (typeof s.timestamp === 'string' ? parseTimestamp(s.timestamp) : undefined) ?? ZERO_TIME,
    signature: bytesOf(s.signature)
  }
}

/** A protojson enum (its name, or a number for a value the gateway does not know) as its number. */
const enumNumber = (value: unknown, names: Readonly<Record<string, number>>): number => enumByName(value, names) ?? int(value)

function evidence (value: unknown): Static<typeof Evidence> {
  const e = obj(value)
  if (e.duplicate_vote_evidence !== undefined && e.duplicate_vote_evidence !== null) {
    const d = obj(e.duplicate_vote_evidence)
    return {
      vote_a: orNull(d.vote_a, vote),
      vote_b: orNull(d.vote_b, vote),
      TotalVotingPower: int64(d.total_voting_power),
      ValidatorPower: int64(d.validator_power),
      Timestamp: rfc3339Nano(d.timestamp)
    }
  }
  if (e.light_client_attack_evidence !== undefined && e.light_client_attack_evidence !== null) {
    const l = obj(e.light_client_attack_evidence)
    return {
      conflicting_block: orNull(l.conflicting_block, lightBlock),
      common_height: int64(l.common_height),
      ByzantineValidators: list(l.byzantine_validators).map(validator),
      TotalVotingPower: int64(l.total_voting_power),
      Timestamp: rfc3339Nano(l.timestamp)
    }
  }
  throw new InvalidBlockError('evidence is not recognized')
}

function vote (value: unknown): Static<typeof Vote> {
  const v = obj(value)
  return {
    type: enumNumber(v.type, SIGNED_MSG_TYPE_NAMES),
    height: int64(v.height),
    round: int(v.round),
    block_id: blockId(v.block_id),
    timestamp: rfc3339Nano(v.timestamp),
    validator_address: hexUpper(v.validator_address),
    validator_index: int(v.validator_index),
    signature: base64OrNull(v.signature),
    extension: base64OrNull(v.extension),
    extension_signature: base64OrNull(v.extension_signature)
  }
}

function lightBlock (value: unknown): Static<typeof LightBlock> {
  const l = obj(value)
  return {
    signed_header: orNull(l.signed_header, (signed) => ({
      header: orNull(obj(signed).header, (h) => header(h, false)),
      commit: orNull(obj(signed).commit, commit)
    })),
    validator_set: orNull(l.validator_set, (set) => ({
      validators: list(obj(set).validators).map(validator),
      proposer: orNull(obj(set).proposer, validator)
    }))
  }
}

/** types.Validator; its PubKey interface holds ed25519.PubKey or secp256k1.PubKey, both []byte. */
function validator (value: unknown): Static<typeof Validator> {
  const v = obj(value)
  const key = obj(v.pub_key)
  return {
    address: hexUpper(v.address),
    pub_key: base64OrNull(key.ed25519 ?? key.secp256k1),
    voting_power: int64(v.voting_power),
    proposer_priority: int64(v.proposer_priority)
  }
}

/**
 * The gateway's proof_ops as Go writes them (zpoken/gonka common/queryapi/epoch.go@ef1a5efd
 * converts them to cometbft crypto.ProofOps, "the exact type legacy dapi returned").
 */
export function cometProofOpsFromGateway (proofOps: unknown): Static<typeof CometProofOps> {
  const ops = list(obj(proofOps).ops).map((value) => {
    const op = obj(value)
    const type = typeof op.type === 'string' ? op.type : ''
    const key = base64OrNull(op.key)
    const data = base64OrNull(op.data)
    return { ...(type !== '' ? { type } : {}), ...(key !== null ? { key } : {}), ...(data !== null ? { data } : {}) }
  })
  return { ops: ops.length > 0 ? ops : null }
}
