import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire'
import { CREATED_AT, CURRENT_EPOCH, EPOCH_INFO, EPOCH_PARAMS, POC_START } from './epochs.js'
import { PARENT_GROUP, SUB_GROUP_MODELS, subGroupData } from './models.js'

// The inference module's collections behind the routes edge-api can prove (src/proven/):
// the store entries the REST answers of get_current_epoch, epoch_info and the epoch groups
// are computed from, so that a value read with abci_query?prove=true says what the REST
// answer says. Written out here from gonka's sources, independently of src/:
//   keys: collections.NewPrefix(n) ‖ the key codec's bytes (Uint64Key 8 bytes big-endian;
//   a Pair's first half non-terminal, its terminal StringKey raw bytes): EpochGroupDataPrefix
//   10, EpochsPrefix 11, EffectiveEpochIndexPrefix 12, ActiveConfirmationPoCEventPrefix 26,
//   ParamsKey "p_inference" (kaitakuai/gonka inference-chain/x/inference/types/keys.go
//   @2b0162e1; 10–12 the same at gonka-ai/gonka@312044d2);
//   values: collections.Uint64Value (8 bytes big-endian), the gogoproto messages Epoch,
//   EpochGroupData, Model, Params/EpochParams (gonka-ai/gonka inference-chain/proto/inference/
//   inference/*.proto@312044d2) and ConfirmationPoCEvent (the field numbers src/wire/chain-version.ts
//   lists for v0.2.14). Zero values are left out, as gogoproto's marshaller does.

export const EPOCH_GROUP_DATA_PREFIX = 0x0a
export const EPOCHS_PREFIX = 0x0b
export const EFFECTIVE_EPOCH_INDEX_PREFIX = 0x0c
export const ACTIVE_CONFIRMATION_POC_EVENT_PREFIX = 0x1a
export const PARAMS_KEY = Buffer.from('p_inference')

const u64 = (n: bigint): Buffer => {
  const bytes = Buffer.alloc(8)
  bytes.writeBigUInt64BE(n)
  return bytes
}

export const effectiveEpochIndexKey = (): Buffer => Buffer.of(EFFECTIVE_EPOCH_INDEX_PREFIX)
export const epochKey = (index: bigint): Buffer => Buffer.concat([Buffer.of(EPOCHS_PREFIX), u64(index)])
export const epochGroupDataKey = (epoch: bigint, modelId: string): Buffer => Buffer.concat([Buffer.of(EPOCH_GROUP_DATA_PREFIX), u64(epoch), Buffer.from(modelId)])
export const activeConfirmationPoCEventKey = (): Buffer => Buffer.of(ACTIVE_CONFIRMATION_POC_EVENT_PREFIX)

type Json = Record<string, unknown>

/** Writes the non-zero varint fields of `fields` (field number → protojson value: a decimal string, a number or a bool). */
function varints (w: BinaryWriter, fields: ReadonlyArray<readonly [number, unknown]>): void {
  for (const [field, value] of fields) {
    if (value === undefined || value === null || value === false) continue
    const n = typeof value === 'boolean' ? 1n : BigInt(value as string)
    if (n !== 0n) w.tag(field, WireType.Varint).int64(n)
  }
}

function strings (w: BinaryWriter, fields: ReadonlyArray<readonly [number, string | undefined]>): void {
  for (const [field, value] of fields) if (value !== undefined && value !== '') w.tag(field, WireType.LengthDelimited).string(value)
}

function decimal (w: BinaryWriter, field: number, d: { value: string, exponent: number } | null | undefined): void {
  if (d === null || d === undefined) return
  w.tag(field, WireType.LengthDelimited).fork()
  varints(w, [[1, d.value], [2, d.exponent]])
  w.join()
}

/** inference.inference.Model (model.proto). */
export function encodeModel (w: BinaryWriter, m: Json): void {
  strings(w, [[1, m.proposed_by as string], [2, m.id as string]])
  varints(w, [[3, m.units_of_compute_per_token], [4, m.context_window]])
  strings(w, [[5, m.quantization as string]])
  varints(w, [[6, m.coins_per_input_token], [7, m.coins_per_output_token]])
  strings(w, [[8, m.hf_repo as string], [9, m.hf_commit as string]])
  for (const arg of m.model_args as string[]) w.tag(10, WireType.LengthDelimited).string(arg)
  varints(w, [[11, m.v_ram], [12, m.throughput_per_nonce]])
  decimal(w, 13, m.validation_threshold as { value: string, exponent: number } | null)
}

/** inference.inference.EpochGroupData (epoch_group_data.proto), its scalar fields and model snapshot. */
export function encodeEpochGroupData (g: Json): Uint8Array {
  const w = new BinaryWriter()
  varints(w, [[1, g.poc_start_block_height], [2, g.epoch_group_id]])
  strings(w, [[3, g.epoch_policy as string]])
  varints(w, [[4, g.effective_block_height], [5, g.last_block_height], [9, g.unit_of_compute_price], [10, g.number_of_requests], [11, g.previous_epoch_requests], [13, g.total_weight]])
  strings(w, [[14, g.model_id as string]])
  for (const model of g.sub_group_models as string[]) w.tag(15, WireType.LengthDelimited).string(model)
  varints(w, [[16, g.epoch_index]])
  if (g.model_snapshot !== null && g.model_snapshot !== undefined) {
    w.tag(17, WireType.LengthDelimited).fork()
    encodeModel(w, g.model_snapshot as Json)
    w.join()
  }
  varints(w, [[18, g.total_throughput]])
  return w.finish()
}

/** inference.inference.Params with its epoch_params (field 1; the other groups are not what a proven route reads). */
export function encodeParams (p: Json): Uint8Array {
  const w = new BinaryWriter()
  w.tag(1, WireType.LengthDelimited).fork()
  varints(w, [
    [1, p.epoch_length], [2, p.epoch_multiplier], [3, p.epoch_shift], [4, p.default_unit_of_compute_price],
    [5, p.poc_stage_duration], [6, p.poc_exchange_duration], [7, p.poc_validation_delay], [8, p.poc_validation_duration],
    [9, p.set_new_validators_delay], [10, p.inference_validation_cutoff], [11, p.inference_pruning_epoch_threshold],
    [12, p.inference_pruning_max], [13, p.poc_pruning_max]
  ])
  decimal(w, 14, p.poc_slot_allocation as { value: string, exponent: number })
  varints(w, [[15, p.confirmation_poc_safety_window]])
  w.join()
  return w.finish()
}

const PHASES = ['CONFIRMATION_POC_INACTIVE', 'CONFIRMATION_POC_GRACE_PERIOD', 'CONFIRMATION_POC_GENERATION', 'CONFIRMATION_POC_VALIDATION', 'CONFIRMATION_POC_COMPLETED']

/** inference.inference.ConfirmationPoCEvent, the fields edge-api serves. */
export function encodeConfirmationPoCEvent (e: Json): Uint8Array {
  const w = new BinaryWriter()
  varints(w, [[1, e.epoch_index], [2, e.event_sequence], [3, e.trigger_height], [4, e.generation_start_height], [8, PHASES.indexOf(e.phase as string)]])
  strings(w, [[9, e.poc_seed_block_hash as string]])
  return w.finish()
}

/** inference.inference.Epoch { index = 1, poc_start_block_height = 2 }. */
export function encodeEpoch (index: bigint, pocStart: bigint): Uint8Array {
  const w = new BinaryWriter()
  varints(w, [[1, index], [2, pocStart]])
  return w.finish()
}

export interface StateEntry {
  readonly key: Buffer
  readonly value: Uint8Array
  /** The height it was written at: below it, the store does not hold it. */
  readonly height: bigint
}

/**
 * The entries: the effective epoch (CURRENT_EPOCH, from its ActiveParticipants' height on),
 * its Epoch (no next epoch yet: epoch_info's latest is the effective one), the params, the
 * active confirmation PoC event, and the epoch's parent group with one sub-group per model
 * (none for MISSING_SUB_GROUP: its absence is what a proof shows).
 */
export function inferenceState (): StateEntry[] {
  const epoch = BigInt(CURRENT_EPOCH)
  const event = EPOCH_INFO.active_confirmation_poc_event
  const groups = SUB_GROUP_MODELS.flatMap((id) => {
    const data = subGroupData(id)
    return data === undefined ? [] : [{ key: epochGroupDataKey(epoch, id), value: encodeEpochGroupData(data), height: BigInt(CREATED_AT) }]
  })
  return [
    { key: effectiveEpochIndexKey(), value: u64(epoch), height: BigInt(CREATED_AT) },
    { key: epochKey(epoch), value: encodeEpoch(epoch, BigInt(POC_START)), height: BigInt(POC_START) },
    { key: PARAMS_KEY, value: encodeParams(EPOCH_PARAMS), height: 100n },
    { key: activeConfirmationPoCEventKey(), value: encodeConfirmationPoCEvent(event), height: BigInt(event.trigger_height) },
    { key: epochGroupDataKey(epoch, ''), value: encodeEpochGroupData(PARENT_GROUP), height: BigInt(POC_START) },
    ...groups
  ]
}
