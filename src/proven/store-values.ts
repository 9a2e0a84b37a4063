import { int64, message, readFields, string, strings, uint64, type Field } from './proto-fields.js'

// The proven store values a route's answer derives from, decoded into the JSON names the
// answer uses. Field numbers: gonka-ai/gonka inference-chain/proto/inference/inference/
// epoch.proto, epoch_group_data.proto, model.proto, params.proto @312044d2, and
// ConfirmationPoCEvent as src/wire/chain-version.ts lists it for v0.2.14 (its phase enum in
// the order confirmation_poc_event.proto declares it). Only what a proven route serves is
// read; the rest of each message is skipped.

type Fields = Map<number, Field[]>

/** A collections.Uint64Value: 8 bytes big-endian (EffectiveEpochIndex). */
export function uint64Value (bytes: Uint8Array): bigint {
  if (bytes.length !== 8) throw new RangeError(`a Uint64Value is 8 bytes, not ${bytes.length}`)
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0)
}

/** inference.inference.Epoch. */
export function epochValue (bytes: Uint8Array): { index: bigint, poc_start_block_height: bigint } {
  const f = readFields(bytes)
  return { index: uint64(f, 1), poc_start_block_height: int64(f, 2) }
}

export interface ModelSnapshotValue {
  readonly id: string
  readonly units_of_compute_per_token: bigint
  readonly context_window: bigint
  readonly hf_repo: string
}

export interface EpochGroupValue {
  readonly unit_of_compute_price: bigint
  readonly sub_group_models: readonly string[]
  readonly epoch_index: bigint
  readonly model_snapshot: ModelSnapshotValue | undefined
}

/** inference.inference.EpochGroupData: what /v1/models and /v1/pricing read of a parent group and its sub-groups. */
export function epochGroupValue (bytes: Uint8Array): EpochGroupValue {
  const f = readFields(bytes)
  const model = message(f, 17)
  return {
    unit_of_compute_price: int64(f, 9),
    sub_group_models: strings(f, 15),
    epoch_index: uint64(f, 16),
    model_snapshot: model === undefined ? undefined : modelSnapshot(model)
  }
}

function modelSnapshot (m: Fields): ModelSnapshotValue {
  return { id: string(m, 2), units_of_compute_per_token: uint64(m, 3), context_window: uint64(m, 4), hf_repo: string(m, 8) }
}

const EPOCH_PARAMS: ReadonlyArray<readonly [number, string, 'int64' | 'uint64']> = [
  [1, 'epoch_length', 'int64'], [2, 'epoch_multiplier', 'int64'], [3, 'epoch_shift', 'int64'],
  [4, 'default_unit_of_compute_price', 'int64'], [5, 'poc_stage_duration', 'int64'], [6, 'poc_exchange_duration', 'int64'],
  [7, 'poc_validation_delay', 'int64'], [8, 'poc_validation_duration', 'int64'], [9, 'set_new_validators_delay', 'int64'],
  [10, 'inference_validation_cutoff', 'int64'], [11, 'inference_pruning_epoch_threshold', 'uint64'], [12, 'inference_pruning_max', 'int64'],
  [13, 'poc_pruning_max', 'int64'], [15, 'confirmation_poc_safety_window', 'int64']
]

/** inference.inference.Params' epoch_params (field 1), by the names /v1/epochs/latest serves them under. */
export function epochParamsValue (bytes: Uint8Array): Record<string, unknown> {
  const params = message(readFields(bytes), 1) ?? new Map()
  const out: Record<string, unknown> = {}
  for (const [number, name, type] of EPOCH_PARAMS) out[name] = type === 'int64' ? int64(params, number) : uint64(params, number)
  const slot = message(params, 14)
  out.poc_slot_allocation = slot === undefined ? undefined : { value: int64(slot, 1), exponent: int64(slot, 2) }
  return out
}

const PHASES = ['CONFIRMATION_POC_INACTIVE', 'CONFIRMATION_POC_GRACE_PERIOD', 'CONFIRMATION_POC_GENERATION', 'CONFIRMATION_POC_VALIDATION', 'CONFIRMATION_POC_COMPLETED']

/** inference.inference.ConfirmationPoCEvent, the fields /v1/epochs/latest serves. */
export function confirmationEventValue (bytes: Uint8Array): Record<string, unknown> {
  const f = readFields(bytes)
  const phase = Number(int64(f, 8))
  return {
    epoch_index: uint64(f, 1),
    event_sequence: uint64(f, 2),
    trigger_height: int64(f, 3),
    generation_start_height: int64(f, 4),
    // An enum number this build does not know is served as protojson does: the number.
    phase: PHASES[phase] ?? phase,
    poc_seed_block_hash: string(f, 9)
  }
}
