import type { FastifyBaseLogger } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { activeParticipantsKey, decodeActiveParticipants, type ActiveParticipants } from '../../chain/active-participants.js'
import { chainPath } from '../../chain/paths.js'
import type { ChainReader } from '../../chain/types.js'
import { cometBlockFromGateway, cometProofOpsFromGateway } from '../../cometbft/block-from-proto.js'
import { CometBlock, CometProofOps, type CometBlockJson } from '../../cometbft/comet-json-schema.js'
import { omitEmpty, ProtoMessage } from '../../wire/encoding-json.js'
import { validatorKeyAddress } from '../../cometbft/address.js'
import { badRequest, HttpError, notFound } from '../../errors.js'
import { bundleProblem, ProofBundle, proofBundle, type ProofBundleJson } from '../../proven/proof-bundle.js'
import { INFERENCE_STORE } from '../../proven/store-keys.js'
import { Int64, int64, Uint64 } from '../../wire/schema.js'
import { fitsUint64, withChainErrors } from './schemas.js'

const INVALID_EPOCH = 'Invalid epoch id'
const NOT_FOUND = 'active participants not found for epoch'
const ABCI_QUERY = '/cosmos/base/tendermint/v1beta1/abci_query'
const STORE_PATH = 'store/inference/key'

// inference.inference.ActiveParticipants as the newest Go writes it: encoding/json over the
// gogoproto struct, whose fields are all omitempty, so zero values, empty lists and a nil
// seed are left out (zpoken/gonka common/queryapi/epoch.go@ef1a5efd "Legacy dapi used
// encoding/json on ActiveParticipants"; its golden file's active_participants is
// {"created_at_block_height":100,"epoch_group_id":1}; json tags in zpoken/gonka
// inference-chain/x/inference/types/activeparticipants.pb.go@89ff8bdb). The older golden
// file (gonka-ai@604dd86a) had every field; the newest wins (docs/routes.md), except for the lists
// clients index without a guard, which are always arrays ([] breaks no client): the
// participants, and each participant's models and ml_nodes (docs/clients.md).
const MLNodeInfo = ProtoMessage({
  node_id: Type.String(),
  throughput: Int64(),
  poc_weight: Int64(),
  timeslot_allocation: Type.Array(Type.Boolean())
})

const ActiveParticipant = ProtoMessage({
  index: Type.String(),
  validator_key: Type.String(),
  weight: Int64(),
  inference_url: Type.String(),
  models: Type.Array(Type.String()),
  // A pointer: left out when nil; a seed with only zero fields is {}.
  seed: ProtoMessage({ participant: Type.String(), epoch_index: Uint64(), signature: Type.String() }),
  ml_nodes: Type.Array(ProtoMessage({ ml_nodes: Type.Array(MLNodeInfo) })),
  voting_powers: Type.Array(ProtoMessage({ model_id: Type.String(), voting_power: Int64() }))
})

const ActiveParticipantsSchema = ProtoMessage({
  participants: Type.Array(ActiveParticipant),
  epoch_group_id: Uint64(),
  poc_start_block_height: Int64(),
  effective_block_height: Int64(),
  created_at_block_height: Int64(),
  epoch_id: Uint64()
})

const Validator = Type.Object({
  address: Type.String({ description: 'HEX-UPPER(SHA256(pub_key)[:20])' }),
  pub_key: Type.String({ description: 'base64 of the consensus key bytes' }),
  voting_power: Int64(),
  proposer_priority: Int64()
})

const ExcludedParticipant = Type.Object({
  address: Type.String(),
  reason: Type.String(),
  exclusion_block_height: Int64()
})

// The serializer writes required keys before optional ones. validators and
// excluded_participants are always sent, but are optional here so that the keys keep the
// golden file's order, with proof_ops and block (absent at height 0) between them. (Go
// itself writes gen.ActiveParticipantWithProof's alphabetical field order, models.gen.go
// @ef1a5efd; JSON clients do not depend on key order, and npm run compat sorts keys.)
const ALWAYS = 'always present'

const ActiveParticipantsWithProof = Type.Object({
  active_participants: ActiveParticipantsSchema,
  addresses: Type.Array(Type.String(), { description: 'per participant: HEX-UPPER(SHA256(validator_key)[:20]), "" when the key is not base64' }),
  active_participants_bytes: Type.String({ description: 'the store value, lower-case hex' }),
  proof_ops: Type.Optional(CometProofOps),
  validators: Type.Optional(Type.Array(Validator, { description: `${ALWAYS}; [] when created_at_block_height is 0` })),
  block: Type.Optional(CometBlock),
  excluded_participants: Type.Optional(Type.Array(ExcludedParticipant, { description: `${ALWAYS}; [] when none or when the chain query fails` })),
  proof: Type.Optional(ProofBundle)
})

interface GatewayAbciAnswer {
  code?: number
  value?: string | null
  proof_ops?: unknown
}

interface GatewayValidatorSet {
  validators?: Array<{ pub_key?: { key?: string } | null, voting_power?: string, proposer_priority?: string }>
}

interface GatewayBlock {
  block?: unknown
}

interface GatewayExcluded {
  items?: Array<{ address?: string, reason?: string, exclusion_block_height?: string }>
}

export const epochParticipants: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/epochs/:epoch/participants', {
    schema: {
      summary: 'An epoch\'s active participants with the store proof, the validator set and the exclusions',
      params: Type.Object({
        // The range and "0" are checked in the preHandler: the Go service had a message for each.
        epoch: Type.String({ pattern: '^(?:current|[0-9]{1,64})$', description: '"current" or an epoch number from 1', 'x-error': INVALID_EPOCH })
      }),
      querystring: Type.Object({
        proof: Type.Optional(Type.Literal('1', { description: 'add `proof`: the store value with its ICS23 proof and the app hash it proves against (docs/verified-reads.md)' }))
      }),
      response: withChainErrors(ActiveParticipantsWithProof)
    },
    // Before the answer is pinned (src/cache/http-cache.ts runs the route's own preHandlers
    // first): a bad epoch is a 400 without any chain request, the head poll included.
    preHandler: async (request) => {
      if (request.params.epoch !== 'current') numberedEpoch(request.params.epoch)
    }
  }, async (request) => {
    const { log, chain } = request
    const epoch = await resolveEpoch(chain, request.params.epoch)
    const data = Buffer.from(activeParticipantsKey(epoch)).toString('base64')

    // The ABCI query's own height parameter pins it (the header does not reach the store
    // query); when this is the answer's first read, the height it is answered at pins the rest.
    const latest = chain.height === undefined ? {} : { height: String(chain.height) }
    const stored = storeValue(await chain.get(ABCI_QUERY, { path: STORE_PATH, data, ...latest }) as GatewayAbciAnswer)
    // Bytes that do not decode are not a client's mistake: a bare 500, the detail in the log.
    const participants = decodeActiveParticipants(stored)
    const height = BigInt(participants.created_at_block_height)

    // A store entry written at height 0 (genesis) has no provable version and no block
    // after it to prove against, and CometBFT has no validator set at height 0.
    const proven: Proven = height > 0n ? await provenAt(chain, data, height, log) : { bytes: stored, validators: [] }
    const { bytes, proofOps, block, validators } = proven
    const proof = request.query.proof === '1' ? { proof: bundleOf(activeParticipantsKey(epoch), height, proven) } : {}
    return {
      active_participants: participantsJson(participants),
      addresses: participants.participants.map((p) => validatorKeyAddress(p.validator_key)),
      active_participants_bytes: Buffer.from(bytes).toString('hex'),
      ...(proofOps !== undefined ? { proof_ops: proofOps } : {}),
      validators,
      ...(block !== undefined ? { block } : {}),
      excluded_participants: await excluded(chain, epoch, log),
      ...proof
    }
  })
}

/**
 * `?proof=1`'s bundle: the entry with its proof at its created height, against the app hash
 * of the block after it, checked before it is served (a node whose proof does not verify is
 * refused, never passed on). Phase 2's verified headers will give that app hash; until then it
 * is the node's own block's, and the client checks it against its own verified header.
 */
function bundleOf (key: Uint8Array, height: bigint, { bytes, proofOps, block }: Proven): ProofBundleJson {
  if (height === 0n) throw new HttpError(404, 'no proof: the entry was written at genesis (height 0), which no store version proves')
  if (proofOps === undefined || block === undefined) {
    throw new HttpError(503, `no proof yet: ${proofOps === undefined ? 'the chain node gave no proof ops' : `the block after ${height} is not available`}`, { 'retry-after': '1' })
  }
  const bundle = proofBundle(height, Buffer.from(block.header.app_hash, 'hex'), [{
    store: INFERENCE_STORE,
    key: Buffer.from(key).toString('base64'),
    value: Buffer.from(bytes).toString('base64'),
    proof_ops: (proofOps.ops ?? []).map((op) => ({ type: '', key: '', data: '', ...op }))
  }])
  const problem = bundleProblem(bundle, Buffer.from(block.header.app_hash, 'hex'))
  if (problem !== undefined) throw new HttpError(502, `the chain node's proof does not verify against block ${height + 1n}'s app hash: ${problem}`)
  return bundle
}

/** The store entry at `height`, with its proof, the block after it and the validator set that signed that block. */
async function provenAt (chain: ChainReader, data: string, height: bigint, log: FastifyBaseLogger): Promise<Proven> {
  const proven = await chain.get(ABCI_QUERY, { path: STORE_PATH, data, height: String(height), prove: 'true' }) as GatewayAbciAnswer
  const bytes = storeValue(proven)
  const proofOps = proven.proof_ops === null || proven.proof_ops === undefined ? undefined : cometProofOpsFromGateway(proven.proof_ops)
  const block = await blockAfter(chain, height, log)
  // The Go service also verified the proof (ICS23) against block.header.app_hash here,
  // but only logged the outcome and never changed the answer; clients verify it
  // themselves, so it is not repeated here.
  const set = await chain.get(chainPath`/cosmos/base/tendermint/v1beta1/validatorsets/${height}`) as GatewayValidatorSet
  return { bytes, proofOps, block, validators: (set.validators ?? []).map(toValidator) }
}

interface Proven {
  readonly bytes: Uint8Array
  readonly proofOps?: Static<typeof CometProofOps> | undefined
  readonly block?: CometBlockJson | undefined
  readonly validators: Array<Static<typeof Validator>>
}

/** Go's omitempty shape (a nil seed left out), with the lists that clients index always present. */
function participantsJson (a: ActiveParticipants): Static<typeof ActiveParticipantsSchema> {
  return {
    ...omitEmpty(a),
    participants: a.participants.map((p) => ({ ...omitEmpty(p), models: p.models, ml_nodes: p.ml_nodes.map(omitEmpty) }))
  } as Static<typeof ActiveParticipantsSchema>
}

async function resolveEpoch (chain: ChainReader, param: string): Promise<bigint> {
  if (param === 'current') {
    const answer = await chain.get('/productscience/inference/inference/get_current_epoch') as { epoch?: string }
    return BigInt(int64(answer.epoch))
  }
  return numberedEpoch(param)
}

/** An epoch number the schema's pattern let through, with the Go service's words for one out of range or 0. */
function numberedEpoch (param: string): bigint {
  if (!fitsUint64(param)) throw badRequest(INVALID_EPOCH)
  const epoch = BigInt(param)
  if (epoch === 0n) throw badRequest('Epoch enumeration starts with 1')
  return epoch
}

/** The value of an ABCI store query; an error code or an empty value means no entry. */
function storeValue (answer: GatewayAbciAnswer): Uint8Array {
  const value = typeof answer.value === 'string' ? Buffer.from(answer.value, 'base64') : undefined
  if ((answer.code ?? 0) !== 0 || value === undefined || value.length === 0) throw notFound(NOT_FOUND)
  return value
}

/**
 * The block after `height` in CometBFT's encoding/json shape. It may not exist yet, and Go
 * leaves it out when comettypes.BlockFromProto refuses it, so neither is an error.
 */
async function blockAfter (chain: ChainReader, height: bigint, log: FastifyBaseLogger): Promise<CometBlockJson | undefined> {
  let answer: GatewayBlock
  try {
    answer = await chain.get(chainPath`/cosmos/base/tendermint/v1beta1/blocks/${height + 1n}`) as GatewayBlock
  } catch (err) {
    log.info({ err, height: String(height + 1n) }, 'block after the active participants is not available')
    return undefined
  }
  // Go converts the deprecated `block` (tendermint.types.Block), not `sdk_block`.
  if (answer.block === null || answer.block === undefined) return undefined
  try {
    return cometBlockFromGateway(answer.block)
  } catch (err) {
    // InvalidBlockError: what comettypes.BlockFromProto refuses; Go logs it and leaves the block out.
    log.warn({ err, height: String(height + 1n) }, 'block after the active participants is not a valid CometBFT block; left out')
    return undefined
  }
}

function toValidator (v: NonNullable<GatewayValidatorSet['validators']>[number]): Static<typeof Validator> {
  const key = v.pub_key?.key ?? ''
  return {
    address: validatorKeyAddress(key),
    pub_key: key,
    voting_power: int64(v.voting_power),
    proposer_priority: int64(v.proposer_priority)
  }
}

/** Exclusions are extra information: the Go service answered [] when the query failed. */
async function excluded (chain: ChainReader, epoch: bigint, log: FastifyBaseLogger): Promise<Array<Static<typeof ExcludedParticipant>>> {
  try {
    const answer = await chain.get(chainPath`/productscience/inference/inference/excluded_participants/${epoch}`) as GatewayExcluded
    return (answer.items ?? []).map((item) => ({
      address: item.address ?? '',
      reason: item.reason ?? '',
      exclusion_block_height: int64(item.exclusion_block_height)
    }))
  } catch (err) {
    log.warn({ err, epoch: String(epoch) }, 'excluded participants query failed; answering none')
    return []
  }
}
