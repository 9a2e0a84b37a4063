import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { fromProtoJson, ProtoMessage } from '../../wire/encoding-json.js'
import { exactInteger, Int64, int64, Uint64 } from '../../wire/schema.js'
import { currentEpochModels, type EpochModels, type ModelSnapshot } from '../../chain/epoch-models.js'
import { Decimal, Nullable, withChainErrors } from './schemas.js'

// Field order follows the Go service's ModelDescriptor; description and quantization are
// part of its contract but were never set, so they are never emitted. fast-json-stringify
// writes required properties before optional ones, so everything after the optional
// hugging_face_id is declared optional too, to keep it between id and name on the wire;
// those fields are always present.
const ModelDescriptor = Type.Object({
  object: Type.Literal('model'),
  id: Type.String(),
  hugging_face_id: Type.Optional(Type.String({ description: "the model's Hugging Face repository; omitted when it has none" })),
  name: Type.Optional(Type.String({ description: 'the model id; always present' })),
  created: Type.Optional(Int64({ description: 'unix seconds of the request time, the same for every entry; always present' })),
  description: Type.Optional(Type.String({ description: 'never set' })),
  input_modalities: Type.Optional(Type.Array(Type.String(), { description: 'always ["text"]' })),
  output_modalities: Type.Optional(Type.Array(Type.String(), { description: 'always ["text"]' })),
  quantization: Type.Optional(Type.String({ description: 'never set' })),
  context_length: Type.Optional(Uint64({ description: "the model's context window in tokens; always present" })),
  max_output_length: Type.Optional(Uint64({ description: "the model's context window in tokens; always present" }))
})

const ModelsList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(ModelDescriptor)
})

const ModelPrice = Type.Object({
  id: Type.String(),
  units_of_compute_per_token: Uint64(),
  price_per_token: Uint64({ description: 'units_of_compute_per_token × unit_of_compute_price, exact' })
})

const Pricing = Type.Object({
  unit_of_compute_price: Uint64({ description: "the current epoch's price of one unit of compute" }),
  models: Type.Array(ModelPrice),
  dynamic_pricing_enabled: Type.Boolean({ description: 'always false: dynamic prices are not served here' })
})

/** inference.inference.Model as the Go service wrote it (encoding/json, omitempty). */
const Model = ProtoMessage({
  proposed_by: Type.String(),
  id: Type.String(),
  units_of_compute_per_token: Uint64(),
  context_window: Uint64(),
  quantization: Type.String(),
  coins_per_input_token: Uint64(),
  coins_per_output_token: Uint64(),
  hf_repo: Type.String(),
  hf_commit: Type.String(),
  model_args: Type.Array(Type.String()),
  v_ram: Uint64(),
  throughput_per_nonce: Uint64(),
  validation_threshold: Decimal
})
const ModelArray = Type.Array(Model)

type ModelValue = Static<typeof Model>

interface GatewayModelsAll { model?: unknown }

const MODELS_ALL = '/productscience/inference/inference/models_all'

export const models: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/models', {
    schema: {
      summary: 'The models served in the current epoch, OpenAI-style',
      response: withChainErrors(ModelsList)
    }
  }, async (request) => {
    const { snapshots } = await currentEpochModels(request.chain, request.log)
    return { object: 'list' as const, data: snapshots.map(openAiModel(Math.floor(Date.now() / 1000))) }
  })

  app.get('/pricing', {
    schema: {
      summary: "The current epoch's price per token of every served model",
      response: withChainErrors(Pricing)
    }
  }, async (request) => pricingOf(await currentEpochModels(request.chain, request.log)))

  app.get('/governance/models', {
    schema: {
      summary: 'Every model governance has registered',
      // [] when the chain has none, where Go wrote its nil slice as null: Gonkastats requires
      // an array (z.object({models: z.array(...)}), docs/clients.md).
      response: withChainErrors(Type.Object({ models: Type.Array(Model, { description: '[] when governance has registered none' }) }))
    }
  }, async (request) => ({ models: toModels(await request.chain.get(MODELS_ALL)) ?? [] }))

  // The old dashboard reads the chain gateway's own field name, "model".
  app.get('/governance/models-legacy', {
    schema: {
      summary: 'Every model governance has registered, under the legacy key "model"',
      response: withChainErrors(Type.Object({ model: Nullable(ModelArray) }))
    }
  }, async (request) => ({ model: toModels(await request.chain.get(MODELS_ALL)) }))
}

/** A served model as an OpenAI-style model descriptor, `created` at the request's time. */
function openAiModel (created: number): (m: ModelSnapshot) => Static<typeof ModelDescriptor> {
  return (m) => {
    const contextWindow = int64(m.context_window)
    return {
      object: 'model' as const,
      id: m.id ?? '',
      ...(m.hf_repo ? { hugging_face_id: m.hf_repo } : {}),
      name: m.id ?? '',
      created,
      input_modalities: ['text'],
      output_modalities: ['text'],
      context_length: contextWindow,
      max_output_length: contextWindow
    }
  }
}

/** The current epoch's prices: the unit price and each model's units and price per token. */
function pricingOf ({ unitOfComputePrice, snapshots }: EpochModels): Static<typeof Pricing> {
  // The chain stores the price as an int64; the Go service reported it as uint64(price).
  const price = BigInt.asUintN(64, BigInt(unitOfComputePrice))
  return {
    unit_of_compute_price: exactInteger(price),
    models: snapshots.map((m) => {
      const units = BigInt(int64(m.units_of_compute_per_token))
      return { id: m.id ?? '', units_of_compute_per_token: exactInteger(units), price_per_token: exactInteger(units * price) }
    }),
    dynamic_pricing_enabled: false
  }
}

/**
 * The legacy shape of a models_all answer; null when the chain has none, as Go's nil slice
 * was. An unset validation_threshold (protojson null) is left out, as Go's nil pointer was.
 */
function toModels (answer: unknown): ModelValue[] | null {
  const list = fromProtoJson(ModelArray, (answer as GatewayModelsAll | null)?.model) as ModelValue[] | undefined
  return list === undefined || list.length === 0 ? null : list
}
