import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { g1Uncompressed128, g2Uncompressed256 } from '../../chain/bls-points.js'
import { chainPath, type ChainClient } from '../../chain/client.js'
import { badRequest, ChainQueryError, GrpcCode, legacyChainQuery } from '../../errors.js'
import { fromProtoJson, Int64, ProtoEnum, ProtoMessage, Uint64 } from '../../chain/proto-json.js'
import { fitsUint64, Nullable, UINT64_RULE, Uint64Param, withChainErrors } from './schemas.js'

// The BLS module (inference.bls): DKG data per epoch and threshold signing requests, answered
// as the Go service did: Go's encoding/json over the gogoproto structs (64-bit integers as
// numbers, enums as numbers, bytes as base64, zero fields left out), plus the points
// uncompressed for EVM contracts.

const Bytes = (description = 'base64'): ReturnType<typeof Type.String> => Type.String({ description })
const Uint32 = (): ReturnType<typeof Type.Integer> => Type.Integer({ format: 'uint32', minimum: 0 })

/** inference.bls.DKGPhase. DISPUTING was appended after SIGNED when the dispute phase came. */
const DkgPhase = ProtoEnum({
  DKG_PHASE_UNDEFINED: 0,
  DKG_PHASE_DEALING: 1,
  DKG_PHASE_VERIFYING: 2,
  DKG_PHASE_COMPLETED: 3,
  DKG_PHASE_FAILED: 4,
  DKG_PHASE_SIGNED: 5,
  DKG_PHASE_DISPUTING: 6
})

/** inference.bls.ThresholdSigningStatus. */
const SigningStatus = {
  THRESHOLD_SIGNING_STATUS_UNDEFINED: 0,
  THRESHOLD_SIGNING_STATUS_PENDING_SIGNING: 1,
  THRESHOLD_SIGNING_STATUS_COLLECTING_SIGNATURES: 2,
  THRESHOLD_SIGNING_STATUS_COMPLETED: 3,
  THRESHOLD_SIGNING_STATUS_FAILED: 4,
  THRESHOLD_SIGNING_STATUS_EXPIRED: 5,
  THRESHOLD_SIGNING_STATUS_CANCELLED: 6
} as const

const BLSParticipantInfo = ProtoMessage({
  address: Type.String(),
  percentage_weight: Type.String({ description: 'decimal, 18 places' }),
  secp256k1_public_key: Bytes(),
  slot_start_index: Uint32(),
  slot_end_index: Uint32()
})

const DealerPartStorage = ProtoMessage({
  dealer_address: Type.String(),
  commitments: Type.Array(Bytes('base64 compressed G2 points')),
  participant_shares: Type.Array(Nullable(ProtoMessage({ encrypted_shares: Type.Array(Bytes()) })))
})

const DealerComplaint = ProtoMessage({
  dealer_index: Uint32(),
  complainer_index: Uint32(),
  disputed_slot_index: Uint32(),
  disputed_ciphertext_index: Uint32()
})

/** inference.bls.EpochBLSData: one epoch's DKG round. */
const EpochBLSData = ProtoMessage({
  epoch_id: Uint64(),
  i_total_slots: Uint32(),
  t_slots_degree: Uint32(),
  // Non-nullable in gogoproto, so no omitempty: always present, null when empty.
  participants: Nullable(Type.Array(BLSParticipantInfo)),
  dkg_phase: DkgPhase,
  dealing_phase_deadline_block: Int64(),
  verifying_phase_deadline_block: Int64(),
  disputing_phase_deadline_block: Int64(),
  group_public_key: Bytes('base64 compressed G2 point (96 bytes)'),
  // Entries are pointers: null for a participant that has not dealt yet.
  dealer_parts: Type.Array(Nullable(DealerPartStorage)),
  verification_submissions: Type.Array(Nullable(ProtoMessage({ dealer_validity: Type.Array(Type.Boolean()) }))),
  valid_dealers: Type.Array(Type.Boolean()),
  candidate_valid_dealers: Type.Array(Type.Boolean()),
  dealer_complaints: Type.Array(DealerComplaint),
  validation_signature: Bytes('base64 compressed G1 point (48 bytes)')
})

const EpochResponse = Type.Object({
  epoch_data: EpochBLSData,
  group_public_key_uncompressed_256: Nullable(Bytes('base64, 256 bytes: X.c0, X.c1, Y.c0, Y.c1, each a 64-byte big-endian limb')),
  validation_signature_uncompressed_128: Nullable(Bytes('base64, 128 bytes: X, Y, each a 64-byte big-endian limb'))
})

const PartialSignature = ProtoMessage({
  participant_address: Type.String(),
  slot_indices: Type.Array(Uint32()),
  signature: Bytes()
})

/** inference.bls.ThresholdSigningRequest. */
const ThresholdSigningRequest = ProtoMessage({
  request_id: Bytes(),
  current_epoch_id: Uint64(),
  chain_id: Bytes(),
  data: Type.Array(Bytes()),
  encoded_data: Bytes(),
  message_hash: Bytes(),
  status: ProtoEnum(SigningStatus),
  // Non-nullable in gogoproto, so no omitempty: always present, null when empty.
  partial_signatures: Nullable(Type.Array(PartialSignature)),
  final_signature: Bytes('base64 compressed G1 point (48 bytes)'),
  created_block_height: Int64(),
  deadline_block_height: Int64()
})

// One schema for both answers: a request not found is {"signing_request": null} only, which
// clients poll for; a found one carries the uncompressed signature key, null until COMPLETED.
const SignatureResponse = Type.Object({
  signing_request: Nullable(ThresholdSigningRequest),
  uncompressed_signature_128: Type.Optional(Nullable(Bytes('base64, 128 bytes: X, Y, each a 64-byte big-endian limb')))
})

const MAX_REQUEST_ID_BYTES = 64
const INVALID_REQUEST_ID = 'Invalid request ID format (must be hex-encoded)'

const RequestIdParam = Type.String({
  pattern: `^(?:[0-9a-fA-F]{2}){1,${MAX_REQUEST_ID_BYTES}}$`,
  description: `hex, at most ${MAX_REQUEST_ID_BYTES} bytes`,
  'x-error': INVALID_REQUEST_ID
})

interface GatewayEpochData { group_public_key?: unknown, validation_signature?: unknown }
interface GatewayEpoch { epoch_data?: GatewayEpochData | null }
interface GatewaySigningRequest { final_signature?: unknown }
interface GatewaySigning { signing_request?: GatewaySigningRequest | null }

export const bls: FastifyPluginAsyncTypebox<{ chain: ChainClient }> = async (app, { chain }) => {
  const epochRoute = {
    schema: {
      summary: 'An epoch\'s BLS DKG data, with the group key and validation signature uncompressed',
      params: Type.Object({ id: Uint64Param }),
      response: withChainErrors(EpochResponse)
    }
  }
  for (const path of ['/bls/epoch/:id', '/bls/epochs/:id']) {
    app.get(path, epochRoute, async (request) => {
      const { id } = request.params
      // Uint64Param's own rule, so an overflowing id reads like any other malformed one.
      if (!fitsUint64(id)) throw badRequest(`invalid path parameter id: ${UINT64_RULE}`)
      const answer = await legacyChainQuery(chain.get(chainPath`/productscience/inference/bls/epoch_data/${BigInt(id)}`), failedToQuery('BLS epoch data')) as GatewayEpoch | null
      const raw: GatewayEpochData = answer?.epoch_data ?? {}
      const epochData = fromProtoJson(EpochBLSData, answer?.epoch_data) ?? {}
      return {
        epoch_data: { ...epochData, participants: epochData.participants ?? null },
        group_public_key_uncompressed_256: uncompressed(raw.group_public_key, g2Uncompressed256),
        validation_signature_uncompressed_128: uncompressed(raw.validation_signature, g1Uncompressed128)
      }
    })
  }

  app.get('/bls/signatures/:request_id', {
    schema: {
      summary: 'A threshold signing request and, once completed, its signature uncompressed',
      params: Type.Object({ request_id: RequestIdParam }),
      response: withChainErrors(SignatureResponse)
    }
  }, async (request) => {
    // base64url keeps "/" out of the path segment; grpc-gateway decodes a bytes path parameter
    // as standard base64 and falls back to base64url, both padded, so the chain sees the same bytes.
    const requestId = base64UrlPadded(Buffer.from(request.params.request_id, 'hex'))
    let answer: GatewaySigning | null
    try {
      answer = await legacyChainQuery(chain.get(chainPath`/productscience/inference/bls/signing_status/${requestId}`), failedToQuery('BLS signature data')) as GatewaySigning | null
    } catch (err) {
      // Clients poll until the request exists: not found is an answer, not an error.
      if (err instanceof ChainQueryError && err.grpcCode === GrpcCode.NotFound) return { signing_request: null }
      throw err
    }
    const raw: GatewaySigningRequest = answer?.signing_request ?? {}
    const signingRequest = fromProtoJson(ThresholdSigningRequest, answer?.signing_request) ?? {}
    const completed = signingRequest.status === SigningStatus.THRESHOLD_SIGNING_STATUS_COMPLETED
    return {
      signing_request: { ...signingRequest, partial_signatures: signingRequest.partial_signatures ?? null },
      uncompressed_signature_128: completed ? uncompressed(raw.final_signature, g1Uncompressed128) : null
    }
  })
}

/** The Go handlers' 500 for any gateway error: the chain's message after what was queried. */
function failedToQuery (what: string): (err: Error) => string {
  return (err) => `Failed to query ${what}: ${err.message}`
}

/** A base64 field from the gateway, decoded and re-encoded by `encode`; null when absent or invalid. */
function uncompressed (value: unknown, encode: (bytes: Uint8Array) => Uint8Array | null): string | null {
  if (typeof value !== 'string') return null
  const point = encode(Buffer.from(value, 'base64'))
  return point === null ? null : Buffer.from(point).toString('base64')
}

function base64UrlPadded (bytes: Buffer): string {
  const text = bytes.toString('base64url')
  return text + '='.repeat((4 - text.length % 4) % 4)
}
