import { Type, type Static, type TNull, type TString, type TUnion } from 'typebox'
import { Int32, Int64, Nullable, Uint64 } from '../wire/schema.js'

// CometBFT's types.Block and crypto.ProofOps as Go's encoding/json writes them: the schemas of
// /v1/epochs/{epoch}/participants' block and proof_ops (block-from-proto.ts converts the
// gateway's protojson to them). Keys in the Go structs' order: the serializer writes them so.

const Hex = (description: string): ReturnType<typeof Type.String> => Type.String({ description: `${description}: upper-case hex (cometbft HexBytes)` })
const Base64OrNull = (description: string): TUnion<[TString, TNull]> => Nullable(Type.String({ description: `${description}: base64, null when empty (Go []byte)` }))
const Time = (): ReturnType<typeof Type.String> => Type.String({ description: 'RFC3339Nano, UTC' })

export const PartSetHeader = Type.Object({ total: Type.Integer({ format: 'uint32' }), hash: Hex('part set hash') })
export const BlockID = Type.Object({ hash: Hex('block hash'), parts: PartSetHeader })

export const Header = Type.Object({
  // cmtversion.Consensus is a gogoproto struct: its fields are omitempty.
  version: Type.Object({ block: Type.Optional(Uint64()), app: Type.Optional(Uint64()) }),
  chain_id: Type.String(),
  height: Int64(),
  time: Time(),
  last_block_id: BlockID,
  last_commit_hash: Hex('hash'),
  data_hash: Hex('hash'),
  validators_hash: Hex('hash'),
  next_validators_hash: Hex('hash'),
  consensus_hash: Hex('hash'),
  app_hash: Hex('the app hash the proof is checked against'),
  last_results_hash: Hex('hash'),
  evidence_hash: Hex('hash'),
  proposer_address: Hex('proposer consensus address')
})

export const CommitSig = Type.Object({
  block_id_flag: Type.Integer({ description: '1 absent, 2 commit, 3 nil (BlockIDFlag byte)' }),
  validator_address: Hex('validator consensus address'),
  timestamp: Time(),
  signature: Base64OrNull('signature')
})

export const Commit = Type.Object({
  height: Int64(),
  round: Int32(),
  block_id: BlockID,
  signatures: Type.Array(CommitSig)
})

export const Vote = Type.Object({
  type: Type.Integer({ description: 'SignedMsgType: 1 prevote, 2 precommit, 32 proposal' }),
  height: Int64(),
  round: Int32(),
  block_id: BlockID,
  timestamp: Time(),
  validator_address: Hex('validator consensus address'),
  validator_index: Int32(),
  signature: Base64OrNull('signature'),
  extension: Base64OrNull('vote extension'),
  extension_signature: Base64OrNull('vote extension signature')
})

export const Validator = Type.Object({
  address: Hex('consensus address'),
  pub_key: Base64OrNull('consensus key bytes (crypto.PubKey, ed25519 or secp256k1)'),
  voting_power: Int64(),
  proposer_priority: Int64()
})

export const LightBlock = Type.Object({
  signed_header: Nullable(Type.Object({ header: Nullable(Header), commit: Nullable(Commit) })),
  validator_set: Nullable(Type.Object({ validators: Nullable(Type.Array(Validator)), proposer: Nullable(Validator) }))
})

// EvidenceList holds the Evidence interface, which encoding/json writes as the concrete
// struct: DuplicateVoteEvidence or LightClientAttackEvidence. One schema with the keys of
// both, in an order that keeps each struct's own field order; the untagged fields keep
// their Go names.
export const Evidence = Type.Object({
  vote_a: Type.Optional(Nullable(Vote)),
  vote_b: Type.Optional(Nullable(Vote)),
  conflicting_block: Type.Optional(Nullable(LightBlock)),
  common_height: Type.Optional(Int64()),
  ByzantineValidators: Type.Optional(Nullable(Type.Array(Validator))),
  TotalVotingPower: Type.Optional(Int64()),
  ValidatorPower: Type.Optional(Int64()),
  Timestamp: Type.Optional(Time())
}, { description: 'DuplicateVoteEvidence or LightClientAttackEvidence' })

/** CometBFT types.Block as Go's encoding/json writes it. */
export const CometBlock = Type.Object({
  header: Header,
  data: Type.Object({ txs: Type.Array(Type.String({ description: 'base64' })) }),
  evidence: Type.Object({ evidence: Type.Array(Evidence) }),
  last_commit: Nullable(Commit)
}, { description: 'the block after the store entry (whose app_hash the proof is against): CometBFT types.Block through Go\'s encoding/json' })

export type CometBlockJson = Static<typeof CometBlock>

/** tendermint.crypto.ProofOps through encoding/json: ProofOp fields are omitempty, `ops` is not. */
export const CometProofOps = Type.Object({
  ops: Nullable(Type.Array(Type.Object({
    type: Type.Optional(Type.String()),
    key: Type.Optional(Type.String({ description: 'base64' })),
    data: Type.Optional(Type.String({ description: 'base64' }))
  })))
}, { description: 'the ABCI query proof (cometbft crypto.ProofOps through Go\'s encoding/json: key and data base64)' })
