import type { FastifyBaseLogger } from 'fastify'
import { chainPath } from './paths.js'
import type { ChainReader } from './types.js'
import { int64, type Int64Value } from '../wire/schema.js'

/** The fields of an inference.inference.Model snapshot that /v1/models and /v1/pricing read (protojson). */
export interface ModelSnapshot {
  readonly id?: string
  readonly hf_repo?: string
  readonly context_window?: string | number
  readonly units_of_compute_per_token?: string | number
}

interface GatewayEpochGroup {
  readonly epoch_group_data?: {
    readonly unit_of_compute_price?: string | number
    readonly sub_group_models?: readonly string[] | null
    readonly epoch_index?: string | number
    readonly model_snapshot?: ModelSnapshot | null
  } | null
}

export interface EpochModels {
  /** The parent group's unit_of_compute_price (an int64 on the chain). */
  readonly unitOfComputePrice: Int64Value
  /** The model snapshot of every sub-group that has one, in the parent's sub_group_models order. */
  readonly snapshots: readonly ModelSnapshot[]
}

const CURRENT_GROUP = '/productscience/inference/inference/current_epoch_group_data'

/**
 * The models served in the current epoch: the parent epoch group lists one sub-group per
 * model, and each sub-group carries the snapshot of its model as governance defined it
 * when the epoch began. Like the Go service, a sub-group that fails to load or has no
 * snapshot is left out rather than failing the whole answer; only the parent's failure fails.
 */
export async function currentEpochModels (chain: ChainReader, log: FastifyBaseLogger): Promise<EpochModels> {
  const current = await chain.get(CURRENT_GROUP) as GatewayEpochGroup | null
  const parent = current?.epoch_group_data ?? {}
  const epochIndex = String(int64(parent.epoch_index))
  // All sub-groups at once: a request for one model does not wait on the others. The
  // ChainClient's limiter bounds chain requests for the whole process, so a parent with
  // many sub-groups queues there instead of flooding the chain.
  const snapshots = await Promise.all((parent.sub_group_models ?? []).map(async (modelId) => {
    try {
      const answer = await chain.get(
        chainPath`/productscience/inference/inference/epoch_group_data/${epochIndex}`,
        { model_id: modelId }
      ) as GatewayEpochGroup | null
      const snapshot = answer?.epoch_group_data?.model_snapshot
      if (typeof snapshot === 'object' && snapshot !== null) return snapshot
      log.debug({ modelId, epochIndex }, 'sub-group has no model snapshot; left out')
    } catch (err) {
      log.debug({ modelId, epochIndex, err }, 'sub-group query failed; left out')
    }
    return undefined
  }))
  return {
    unitOfComputePrice: int64(parent.unit_of_compute_price),
    snapshots: snapshots.filter((snapshot) => snapshot !== undefined)
  }
}
