import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { g1Uncompressed128, g2Uncompressed256 } from '../../chain/bls-points.js'
import { chainPath } from '../../chain/paths.js'
import { badRequest, ChainQueryError, GrpcCode, legacyChainQuery } from '../../errors.js'
import { ApiBytes, ApiNumberEnum, toApiJson } from '../../wire/proto-to-api-json.js'
import { chainMessage, Int64, Uint64 } from '../../wire/schema.js'
import { goIntegerError } from '../../http/param-errors.js'
import { fitsUint64, Nullable, Uint64Param, withChainErrors } from './schemas.js'

// The BLS module (inference.bls): DKG data per epoch and threshold signing requests, answered
// as the newest Go edge-api does (protoToAPIJSON over the gogoproto structs: 64-bit integers as
// numbers, every field present, empty bytes null; zpoken/gonka common/queryapi/bls.go@ef1a5efd,
// its tests/bls_test.go "epoch_id must be a JSON number"), plus the points uncompressed for
// EVM contracts, with one deliberate difference: enums are numbers, as the deployed wire sends
// them (gonka-ai common/queryapi/bls.go@e7d8032e, encoding/json) and as testermint reads them
// (BLSDKGSuccessTest: `status.toString().toInt()`). The newest Go writes names; every BLS
// client found accepts numbers, and a name breaks testermint (docs/clients.md).

const Uint32 = (options: { description?: string } = {}): ReturnType<typeof Type.Integer> => Type.Integer({ format: 'uint32', minimum: 0, ...options })

/** inference.bls.DKGPhase, by number. DISPUTING was appended after SIGNED when the dispute phase came. */
export const DKG_PHASES = [
  'DKG_PHASE_UNDEFINED',
  'DKG_PHASE_DEALING',
  'DKG_PHASE_VERIFYING',
  'DKG_PHASE_COMPLETED',
  'DKG_PHASE_FAILED',
  'DKG_PHASE_SIGNED',
  'DKG_PHASE_DISPUTING'
] as const
const DkgPhase = ApiNumberEnum(DKG_PHASES)

/** inference.bls.ThresholdSigningStatus, by number. */
export const SIGNING_STATUSES = [
  'THRESHOLD_SIGNING_STATUS_UNDEFINED',
  'THRESHOLD_SIGNING_STATUS_PENDING_SIGNING',
  'THRESHOLD_SIGNING_STATUS_COLLECTING_SIGNATURES',
  'THRESHOLD_SIGNING_STATUS_COMPLETED',
  'THRESHOLD_SIGNING_STATUS_FAILED',
  'THRESHOLD_SIGNING_STATUS_EXPIRED',
  'THRESHOLD_SIGNING_STATUS_CANCELLED'
] as const
const SigningStatus = ApiNumberEnum(SIGNING_STATUSES)
const COMPLETED = SIGNING_STATUSES.indexOf('THRESHOLD_SIGNING_STATUS_COMPLETED')

const BLSParticipantInfo = Type.Object({
  address: Type.String(),
  percentage_weight: Type.String({ description: 'decimal, 18 places' }),
  secp256k1_public_key: ApiBytes(),
  slot_start_index: Uint32(),
  slot_end_index: Uint32(),
  allowed_secp256k1_public_keys: Type.Array(Type.String({ description: 'base64: further keys the participant may be encrypted to (v0.2.12)' }))
}, chainMessage('inference.bls.BLSParticipantInfo'))

const DealerPartStorage = Type.Object({
  dealer_address: Type.String(),
  commitments: Type.Array(Type.String({ description: 'base64 compressed G2 points' })),
  participant_shares: Type.Array(Nullable(Type.Object({ encrypted_shares: Type.Array(Type.String({ description: 'base64' })) }, chainMessage('inference.bls.EncryptedSharesForParticipant'))))
}, chainMessage('inference.bls.DealerPartStorage'))

const DealerComplaint = Type.Object({
  dealer_index: Uint32(),
  complainer_index: Uint32(),
  disputed_slot_index: Uint32(),
  disputed_ciphertext_index: Uint32(),
  // The dealer's answer to the complaint (v0.2.12): false, null, null until it is on chain.
  response_submitted: Type.Boolean(),
  response_share_bytes: ApiBytes(),
  response_opening_material: ApiBytes()
}, chainMessage('inference.bls.DealerComplaint'))

/** inference.bls.EpochBLSData: one epoch's DKG round. */
const EpochBLSData = Type.Object({
  epoch_id: Uint64(),
  i_total_slots: Uint32(),
  t_slots_degree: Uint32(),
  participants: Type.Array(BLSParticipantInfo),
  dkg_phase: DkgPhase,
  dealing_phase_deadline_block: Int64(),
  verifying_phase_deadline_block: Int64(),
  disputing_phase_deadline_block: Int64(),
  group_public_key: ApiBytes('base64 compressed G2 point (96 bytes)'),
  // Entries are pointers: null for a participant that has not dealt yet.
  dealer_parts: Type.Array(Nullable(DealerPartStorage)),
  verification_submissions: Type.Array(Nullable(Type.Object({ dealer_validity: Type.Array(Type.Boolean()) }, chainMessage('inference.bls.VerificationVectorSubmission')))),
  valid_dealers: Type.Array(Type.Boolean()),
  candidate_valid_dealers: Type.Array(Type.Boolean()),
  dealer_complaints: Type.Array(DealerComplaint),
  validation_signature: ApiBytes('base64 compressed G1 point (48 bytes)'),
  // One compressed G2 key per slot (v0.2.8): i_total_slots × 128 base64 characters.
  slot_public_keys: Type.Array(Type.String({ description: 'base64 compressed G2 points (96 bytes), one per slot' }))
}, chainMessage('inference.bls.EpochBLSData'))

const EpochResponse = Type.Object({
  epoch_data: EpochBLSData,
  group_public_key_uncompressed_256: Nullable(Type.String({ description: 'base64, 256 bytes: X.c0, X.c1, Y.c0, Y.c1, each a 64-byte big-endian limb' })),
  validation_signature_uncompressed_128: Nullable(Type.String({ description: 'base64, 128 bytes: X, Y, each a 64-byte big-endian limb' }))
})

const PartialSignature = Type.Object({
  participant_address: Type.String(),
  slot_indices: Type.Array(Uint32()),
  signature: ApiBytes()
}, chainMessage('inference.bls.PartialSignature'))

/** inference.bls.ThresholdSigningRequest. */
const ThresholdSigningRequest = Type.Object({
  request_id: ApiBytes(),
  current_epoch_id: Uint64(),
  chain_id: ApiBytes(),
  data: Type.Array(Type.String({ description: 'base64' })),
  encoded_data: ApiBytes(),
  message_hash: ApiBytes(),
  status: SigningStatus,
  partial_signatures: Type.Array(PartialSignature),
  final_signature: ApiBytes('base64 compressed G1 point (48 bytes)'),
  created_block_height: Int64(),
  deadline_block_height: Int64(),
  attempt: Uint32({ description: 'the signing attempt, from 1 (v0.2.12)' })
}, chainMessage('inference.bls.ThresholdSigningRequest'))

// One schema for both answers: a request not found is {"signing_request": null} only, which
// clients poll for; a found one carries the uncompressed signature key, null until COMPLETED.
const SignatureResponse = Type.Object({
  signing_request: Nullable(ThresholdSigningRequest),
  uncompressed_signature_128: Type.Optional(Nullable(Type.String({ description: 'base64, 128 bytes: X, Y, each a 64-byte big-endian limb' })))
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

export const bls: FastifyPluginAsyncTypebox = async (app, options) => {
  await epochRoutes(app, options)
  await signatureRoute(app, options)
}

/** An epoch's DKG data, under both of Go's paths. */
const epochRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const epochRoute = {
    schema: {
      summary: 'An epoch\'s BLS DKG data, with the group key and validation signature uncompressed',
      params: Type.Object({ id: Uint64Param }),
      response: withChainErrors(EpochResponse)
    },
    // Before the answer is pinned (src/cache/http-cache.ts runs the route's own preHandlers
    // first): an id out of range is a 400 without any chain request, the head poll included.
    // Go's binder: strconv.ParseUint's "value out of range".
    preHandler: async (request: FastifyRequest<{ Params: { id: string } }>) => {
      const { id } = request.params
      if (!fitsUint64(id)) throw badRequest(goIntegerError('id', id, 'uint64'))
    }
  }
  for (const path of ['/bls/epoch/:id', '/bls/epochs/:id']) {
    app.get(path, epochRoute, async (request) => {
      const { id } = request.params
      const answer = await legacyChainQuery(request.chain.get(chainPath`/productscience/inference/bls/epoch_data/${BigInt(id)}`), failedToQuery('BLS epoch data')) as GatewayEpoch | null
      const raw: GatewayEpochData = answer?.epoch_data ?? {}
      return {
        epoch_data: toApiJson(EpochBLSData, raw),
        group_public_key_uncompressed_256: uncompressed(raw.group_public_key, g2Uncompressed256),
        validation_signature_uncompressed_128: uncompressed(raw.validation_signature, g1Uncompressed128)
      }
    })
  }
}

/** A threshold signing request, null until it exists. */
const signatureRoute: FastifyPluginAsyncTypebox = async (app) => {
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
      answer = await legacyChainQuery(request.chain.get(chainPath`/productscience/inference/bls/signing_status/${requestId}`), failedToQuery('BLS signature data')) as GatewaySigning | null
    } catch (err) {
      // Clients poll until the request exists: not found is an answer, not an error.
      if (err instanceof ChainQueryError && err.grpcCode === GrpcCode.NotFound) return { signing_request: null }
      throw err
    }
    const raw: GatewaySigningRequest = answer?.signing_request ?? {}
    const signingRequest = toApiJson(ThresholdSigningRequest, raw)
    const completed = signingRequest.status === COMPLETED
    return {
      signing_request: signingRequest,
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
