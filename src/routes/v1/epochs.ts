import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { currentPhase, epochStages, nextEpochContext, type EpochContext, type EpochParams } from '../../chain/epoch-stages.js'
import { HttpError } from '../../errors.js'
import { fromProtoJson, ProtoMessage } from '../../wire/encoding-json.js'
import { ApiEnum, ApiIfSent, ApiOpenMessage, toApiJson } from '../../wire/proto-to-api-json.js'
import { chainMessage, Int32, Int64, int64, Nullable, Uint64 } from '../../wire/schema.js'
import { Decimal, withChainErrors } from './schemas.js'

const ONLY_LATEST = 'Only getting info for current epoch is supported at the moment'

const ExchangeWindow = Type.Object({ start: Int64(), end: Int64() })

// Go's EpochStages struct: plain json tags, so every key is always present.
const EpochStages = Type.Object({
  epoch_index: Uint64(),
  poc_start: Int64(),
  poc_generation_wind_down: Int64(),
  poc_generation_end: Int64(),
  poc_validation_start: Int64(),
  poc_validation_wind_down: Int64(),
  poc_validation_end: Int64(),
  set_new_validators: Int64(),
  claim_money: Int64(),
  inference_validation_cutoff: Int64(),
  next_poc_start: Int64(),
  poc_exchange_window: ExchangeWindow,
  poc_validation_exchange_window: ExchangeWindow
})

// inference.inference.EpochParams (params.proto), as Go's encoding/json wrote it: numbers,
// zero values left out. Only these, not the full Params: the legacy dapi shape. Every field of
// the chain version followed (src/wire/chain-version.ts), as Go's compiled struct has them.
const EpochParamsBody = ProtoMessage({
  epoch_length: Int64(),
  epoch_multiplier: Int64(),
  epoch_shift: Int64(),
  default_unit_of_compute_price: Int64(),
  poc_stage_duration: Int64(),
  poc_exchange_duration: Int64(),
  poc_validation_delay: Int64(),
  poc_validation_duration: Int64(),
  set_new_validators_delay: Int64(),
  inference_validation_cutoff: Int64(),
  inference_pruning_epoch_threshold: Uint64(),
  inference_pruning_max: Int64(),
  poc_pruning_max: Int64(),
  poc_slot_allocation: Decimal,
  // v0.2.11; 500 on mainnet since v0.2.12: the blocks before each PoC in which no CPoC starts.
  confirmation_poc_safety_window: Int64()
}, chainMessage('inference.inference.EpochParams'))

// inference.inference.ConfirmationPoCEvent (gonka-ai/gonka inference-chain/proto/inference/
// inference/confirmation_poc_event.proto@7c3e29b9), as the newest Go writes it: left out when
// there is no event, else protoToAPIJSON (zpoken/gonka common/queryapi/epoch.go@ef1a5efd):
// phase as its name, every field present, integers as numbers, inside recipe too.
const ApiDecimal = ApiOpenMessage({ value: Int64(), exponent: Int32() }, 'inference.inference.Decimal', chainMessage('inference.inference.Decimal'))
const StatTest = ApiOpenMessage({ dist_threshold: ApiDecimal, p_mismatch: ApiDecimal, p_value_threshold: ApiDecimal }, 'PoCStatTestParams')

// PocStageRecipe (params.proto) is frozen from PocParams when the event is created. Its model
// configs gain fields from one chain version to the next, so only the integer fields known
// from the chain sources (stage_height; PoCModelConfig seq_len, penalty_start_epoch,
// decode_max_tokens and the Decimal values) are converted; the rest is passed on as protojson.
const PocStageRecipe = ApiOpenMessage({
  stage_height: Int64(),
  models: Type.Array(ApiOpenMessage({
    seq_len: Int64(),
    penalty_start_epoch: Int64(),
    decode_max_tokens: Int64(),
    weight_scale_factor: ApiDecimal,
    stat_test: StatTest,
    decode_stat_test: StatTest
  }, 'PoCModelConfig'))
}, 'PocStageRecipe: the stage snapshot of the PoC parameters')

const ConfirmationPoCEvent = Type.Object({
  epoch_index: Uint64(),
  event_sequence: Uint64(),
  trigger_height: Int64(),
  generation_start_height: Int64(),
  phase: ApiEnum([
    'CONFIRMATION_POC_INACTIVE',
    'CONFIRMATION_POC_GRACE_PERIOD',
    'CONFIRMATION_POC_GENERATION',
    'CONFIRMATION_POC_VALIDATION',
    'CONFIRMATION_POC_COMPLETED'
  ]),
  poc_seed_block_hash: Type.String(),
  // Not in v0.2.14's proto: present, null included, only when the chain's gateway sends it.
  recipe: ApiIfSent(Nullable(PocStageRecipe))
}, chainMessage('inference.inference.ConfirmationPoCEvent'))

const EpochResponse = Type.Object({
  block_height: Int64(),
  latest_epoch: Type.Object({ index: Uint64(), poc_start_block_height: Int64() }),
  phase: Type.String({ description: 'PoCGenerate, PoCGenerateWindDown, PoCValidate, PoCValidateWindDown or Inference' }),
  epoch_stages: EpochStages,
  next_epoch_stages: EpochStages,
  epoch_params: EpochParamsBody,
  is_confirmation_poc_active: Type.Boolean(),
  active_confirmation_poc_event: Type.Optional(ConfirmationPoCEvent)
})

interface GatewayEpochInfo {
  block_height?: string
  params?: { epoch_params?: Record<string, unknown> | null } | null
  latest_epoch?: { index?: string, poc_start_block_height?: string } | null
  is_confirmation_poc_active?: boolean
  active_confirmation_poc_event?: unknown
}

export const epochs: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/epochs/:epoch', {
    schema: {
      summary: 'The current epoch: its phase and stage heights, computed from the chain\'s EpochInfo',
      params: Type.Object({
        epoch: Type.Literal('latest', { description: 'only "latest" is supported', 'x-error': ONLY_LATEST })
      }),
      response: withChainErrors(EpochResponse)
    }
  }, async (request) => {
    const info = await request.chain.get('/productscience/inference/inference/epoch_info') as GatewayEpochInfo
    const params = fromProtoJson(EpochParamsBody, info.params?.epoch_params)
    if (params === undefined) throw new HttpError(500, 'epoch params missing')
    const blockHeight = bigint(info.block_height)
    const ctx: EpochContext = {
      index: bigint(info.latest_epoch?.index),
      pocStartBlockHeight: bigint(info.latest_epoch?.poc_start_block_height),
      params: epochParams(params)
    }
    const event = info.active_confirmation_poc_event
    return {
      block_height: int64(info.block_height),
      latest_epoch: { index: int64(info.latest_epoch?.index), poc_start_block_height: int64(info.latest_epoch?.poc_start_block_height) },
      phase: currentPhase(ctx, blockHeight),
      epoch_stages: epochStages(ctx),
      next_epoch_stages: epochStages(nextEpochContext(ctx)),
      epoch_params: params,
      is_confirmation_poc_active: info.is_confirmation_poc_active === true,
      // protojson writes an unset message as null; Go's pointer with omitempty left it out.
      ...(event !== null && event !== undefined ? { active_confirmation_poc_event: toApiJson(ConfirmationPoCEvent, event) } : {})
    }
  })
}

/** The stage arithmetic's inputs, from the converted params (exact numbers or bigints; absent is 0, as in Go). */
function epochParams (p: Static<typeof EpochParamsBody>): EpochParams {
  return {
    epochLength: BigInt(p.epoch_length ?? 0),
    epochShift: BigInt(p.epoch_shift ?? 0),
    pocStageDuration: BigInt(p.poc_stage_duration ?? 0),
    pocExchangeDuration: BigInt(p.poc_exchange_duration ?? 0),
    pocValidationDelay: BigInt(p.poc_validation_delay ?? 0),
    pocValidationDuration: BigInt(p.poc_validation_duration ?? 0),
    setNewValidatorsDelay: BigInt(p.set_new_validators_delay ?? 0),
    inferenceValidationCutoff: BigInt(p.inference_validation_cutoff ?? 0)
  }
}

/** A protojson 64-bit integer (a decimal string, or a number) as a bigint; 0 when absent, as in Go. */
function bigint (value: unknown): bigint {
  return BigInt(int64(value))
}
