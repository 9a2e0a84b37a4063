import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire'
import t from 'tap'
import { confirmationEventValue, epochGroupValue, epochParamsValue, epochValue, uint64Value } from '../../src/proven/store-values.js'
import { CURRENT_EPOCH, EPOCH_INFO, EPOCH_PARAMS, POC_START } from '../../harness/chain-simulator/data/epochs.js'
import { encodeConfirmationPoCEvent, encodeEpoch, encodeEpochGroupData, encodeParams } from '../../harness/chain-simulator/data/inference-state.js'
import { MODELS, PARENT_GROUP, subGroupData } from '../../harness/chain-simulator/data/models.js'

// Each value decoded from the simulator's encoding (written out independently of src/).

t.test('EffectiveEpochIndex is 8 bytes big-endian, nothing else', async (t) => {
  t.equal(uint64Value(Buffer.from('000000000000002a', 'hex')), 42n)
  t.throws(() => uint64Value(Uint8Array.of(42)), new RangeError('a Uint64Value is 8 bytes, not 1'))
})

t.test('Epoch, EpochGroupData, Params and ConfirmationPoCEvent', async (t) => {
  t.same(epochValue(encodeEpoch(BigInt(CURRENT_EPOCH), BigInt(POC_START))), { index: 42n, poc_start_block_height: BigInt(POC_START) })
  t.same(epochGroupValue(encodeEpochGroupData(PARENT_GROUP)), { unit_of_compute_price: 100n, sub_group_models: PARENT_GROUP.sub_group_models, epoch_index: 42n, model_snapshot: undefined }, 'the parent: no snapshot')
  const sub = epochGroupValue(encodeEpochGroupData(subGroupData(MODELS[0].id) as Record<string, unknown>))
  t.same(sub.model_snapshot, { id: MODELS[0].id, units_of_compute_per_token: 1000n, context_window: 240000n, hf_repo: MODELS[0].hf_repo })
  const params = epochParamsValue(encodeParams(EPOCH_PARAMS))
  t.equal(params.epoch_length, 15391n)
  t.equal(params.inference_pruning_epoch_threshold, 2n)
  t.same(params.poc_slot_allocation, { value: 5n, exponent: -1n })
  t.equal(epochParamsValue(new Uint8Array()).poc_slot_allocation, undefined, 'params without epoch_params: every field zero, no slot allocation')
  t.same(confirmationEventValue(encodeConfirmationPoCEvent(EPOCH_INFO.active_confirmation_poc_event)), {
    epoch_index: 42n, event_sequence: 0n, trigger_height: 1843100n, generation_start_height: 1843110n, phase: 'CONFIRMATION_POC_GENERATION', poc_seed_block_hash: EPOCH_INFO.active_confirmation_poc_event.poc_seed_block_hash
  })
  const unknownPhase = new BinaryWriter().tag(8, WireType.Varint).int32(9).finish()
  t.equal(confirmationEventValue(unknownPhase).phase, 9, 'a phase this build does not know: its number, as protojson writes it')
})
