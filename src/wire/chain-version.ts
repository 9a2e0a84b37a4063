// The chain version the response schemas follow, and the fields of the chain messages they
// re-shape, as read from that version's protos (inference-chain/proto/ of the repository and commit
// below). Written by `npm run chain-fields` (docs/chain-version.md): facts about the protos,
// not their text. test/wire/chain-version.test.ts checks every field against the schemas served.

export interface ChainVersion {
  /** The chain's release, as its upgrade names it. */
  readonly version: string
  /** The public GitHub repository (owner/name) and commit the protos were read from. */
  readonly repository: string
  readonly commit: string
}

export interface ChainField {
  readonly number: number
  readonly name: string
  /** A protobuf scalar, or a message's or enum's full name. */
  readonly type: string
  readonly repeated?: true
  readonly enum?: true
}

export interface ChainMessage {
  /** The .proto file, under inference-chain/proto/. */
  readonly file: string
  /** The message's full name. */
  readonly name: string
  readonly fields: readonly ChainField[]
}

export const CHAIN_VERSION: ChainVersion = {
  version: 'v0.2.14',
  repository: 'kaitakuai/gonka',
  commit: 'ee730031decedd2428aa56c65084ae5ab33d9192'
}

export const CHAIN_MESSAGES: readonly ChainMessage[] = [
  {
    file: 'inference/inference/params.proto',
    name: 'inference.inference.EpochParams',
    fields: [
      { number: 1, name: 'epoch_length', type: 'int64' },
      { number: 2, name: 'epoch_multiplier', type: 'int64' },
      { number: 3, name: 'epoch_shift', type: 'int64' },
      { number: 4, name: 'default_unit_of_compute_price', type: 'int64' },
      { number: 5, name: 'poc_stage_duration', type: 'int64' },
      { number: 6, name: 'poc_exchange_duration', type: 'int64' },
      { number: 7, name: 'poc_validation_delay', type: 'int64' },
      { number: 8, name: 'poc_validation_duration', type: 'int64' },
      { number: 9, name: 'set_new_validators_delay', type: 'int64' },
      { number: 10, name: 'inference_validation_cutoff', type: 'int64' },
      { number: 11, name: 'inference_pruning_epoch_threshold', type: 'uint64' },
      { number: 12, name: 'inference_pruning_max', type: 'int64' },
      { number: 13, name: 'poc_pruning_max', type: 'int64' },
      { number: 14, name: 'poc_slot_allocation', type: 'inference.inference.Decimal' },
      { number: 15, name: 'confirmation_poc_safety_window', type: 'int64' }
    ]
  },
  {
    file: 'inference/inference/params.proto',
    name: 'inference.inference.Decimal',
    fields: [
      { number: 1, name: 'value', type: 'int64' },
      { number: 2, name: 'exponent', type: 'int32' }
    ]
  },
  {
    file: 'inference/inference/confirmation_poc_event.proto',
    name: 'inference.inference.ConfirmationPoCEvent',
    fields: [
      { number: 1, name: 'epoch_index', type: 'uint64' },
      { number: 2, name: 'event_sequence', type: 'uint64' },
      { number: 3, name: 'trigger_height', type: 'int64' },
      { number: 4, name: 'generation_start_height', type: 'int64' },
      { number: 8, name: 'phase', type: 'inference.inference.ConfirmationPoCPhase', enum: true },
      { number: 9, name: 'poc_seed_block_hash', type: 'string' }
    ]
  },
  {
    file: 'inference/bls/types.proto',
    name: 'inference.bls.EpochBLSData',
    fields: [
      { number: 1, name: 'epoch_id', type: 'uint64' },
      { number: 2, name: 'i_total_slots', type: 'uint32' },
      { number: 3, name: 't_slots_degree', type: 'uint32' },
      { number: 4, name: 'participants', type: 'inference.bls.BLSParticipantInfo', repeated: true },
      { number: 5, name: 'dkg_phase', type: 'inference.bls.DKGPhase', enum: true },
      { number: 6, name: 'dealing_phase_deadline_block', type: 'int64' },
      { number: 7, name: 'verifying_phase_deadline_block', type: 'int64' },
      { number: 8, name: 'group_public_key', type: 'bytes' },
      { number: 9, name: 'dealer_parts', type: 'inference.bls.DealerPartStorage', repeated: true },
      { number: 10, name: 'verification_submissions', type: 'inference.bls.VerificationVectorSubmission', repeated: true },
      { number: 11, name: 'valid_dealers', type: 'bool', repeated: true },
      { number: 12, name: 'validation_signature', type: 'bytes' },
      { number: 13, name: 'slot_public_keys', type: 'bytes', repeated: true },
      { number: 14, name: 'candidate_valid_dealers', type: 'bool', repeated: true },
      { number: 15, name: 'disputing_phase_deadline_block', type: 'int64' },
      { number: 16, name: 'dealer_complaints', type: 'inference.bls.DealerComplaint', repeated: true }
    ]
  },
  {
    file: 'inference/bls/types.proto',
    name: 'inference.bls.BLSParticipantInfo',
    fields: [
      { number: 1, name: 'address', type: 'string' },
      { number: 2, name: 'percentage_weight', type: 'string' },
      { number: 3, name: 'secp256k1_public_key', type: 'bytes' },
      { number: 4, name: 'slot_start_index', type: 'uint32' },
      { number: 5, name: 'slot_end_index', type: 'uint32' },
      { number: 6, name: 'allowed_secp256k1_public_keys', type: 'bytes', repeated: true }
    ]
  },
  {
    file: 'inference/bls/types.proto',
    name: 'inference.bls.DealerPartStorage',
    fields: [
      { number: 1, name: 'dealer_address', type: 'string' },
      { number: 2, name: 'commitments', type: 'bytes', repeated: true },
      { number: 3, name: 'participant_shares', type: 'inference.bls.EncryptedSharesForParticipant', repeated: true }
    ]
  },
  {
    file: 'inference/bls/types.proto',
    name: 'inference.bls.EncryptedSharesForParticipant',
    fields: [
      { number: 1, name: 'encrypted_shares', type: 'bytes', repeated: true }
    ]
  },
  {
    file: 'inference/bls/types.proto',
    name: 'inference.bls.VerificationVectorSubmission',
    fields: [
      { number: 1, name: 'dealer_validity', type: 'bool', repeated: true }
    ]
  },
  {
    file: 'inference/bls/types.proto',
    name: 'inference.bls.DealerComplaint',
    fields: [
      { number: 1, name: 'dealer_index', type: 'uint32' },
      { number: 2, name: 'complainer_index', type: 'uint32' },
      { number: 3, name: 'disputed_slot_index', type: 'uint32' },
      { number: 4, name: 'disputed_ciphertext_index', type: 'uint32' },
      { number: 5, name: 'response_submitted', type: 'bool' },
      { number: 6, name: 'response_share_bytes', type: 'bytes' },
      { number: 7, name: 'response_opening_material', type: 'bytes' }
    ]
  },
  {
    file: 'inference/bls/threshold_signing.proto',
    name: 'inference.bls.ThresholdSigningRequest',
    fields: [
      { number: 1, name: 'request_id', type: 'bytes' },
      { number: 2, name: 'current_epoch_id', type: 'uint64' },
      { number: 3, name: 'chain_id', type: 'bytes' },
      { number: 4, name: 'data', type: 'bytes', repeated: true },
      { number: 5, name: 'encoded_data', type: 'bytes' },
      { number: 6, name: 'message_hash', type: 'bytes' },
      { number: 7, name: 'status', type: 'inference.bls.ThresholdSigningStatus', enum: true },
      { number: 8, name: 'partial_signatures', type: 'inference.bls.PartialSignature', repeated: true },
      { number: 9, name: 'final_signature', type: 'bytes' },
      { number: 10, name: 'created_block_height', type: 'int64' },
      { number: 11, name: 'deadline_block_height', type: 'int64' },
      { number: 12, name: 'attempt', type: 'uint32' }
    ]
  },
  {
    file: 'inference/bls/params.proto',
    name: 'inference.bls.PartialSignature',
    fields: [
      { number: 1, name: 'participant_address', type: 'string' },
      { number: 2, name: 'slot_indices', type: 'uint32', repeated: true },
      { number: 3, name: 'signature', type: 'bytes' }
    ]
  }
]
