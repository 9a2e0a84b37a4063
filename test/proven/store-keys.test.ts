import t from 'tap'
import { activeConfirmationPoCEventKey, activeParticipantsKey, effectiveEpochIndexKey, epochGroupDataKey, epochKey, INFERENCE_STORE, keyId, paramsKey } from '../../src/proven/store-keys.js'
import { storeKey } from '../../harness/chain-simulator/data/epochs.js'
import * as sim from '../../harness/chain-simulator/data/inference-state.js'

// src's keys against the simulator's, written out independently from gonka's keys.go and
// the collections codecs (harness/chain-simulator/data/inference-state.ts).

t.test('each key as gonka\'s collections encode it', async (t) => {
  t.equal(INFERENCE_STORE, 'inference')
  t.same(Buffer.from(effectiveEpochIndexKey()), sim.effectiveEpochIndexKey(), 'EffectiveEpochIndex: its prefix alone, 0x0c')
  t.equal(keyId(effectiveEpochIndexKey()), '0c')
  t.same(Buffer.from(epochKey(42n)), sim.epochKey(42n), 'Epochs[42]')
  t.equal(keyId(epochKey(18446744073709551615n)), '0bffffffffffffffff', 'the largest epoch: 8 bytes big-endian')
  t.same(Buffer.from(epochGroupDataKey(42n, '')), sim.epochGroupDataKey(42n, ''), 'the parent group: the pair with an empty model id')
  t.same(Buffer.from(epochGroupDataKey(42n, 'Qwen/QwQ-32B')), sim.epochGroupDataKey(42n, 'Qwen/QwQ-32B'), 'a sub-group: the model id\'s bytes, terminal')
  t.same(Buffer.from(activeConfirmationPoCEventKey()), sim.activeConfirmationPoCEventKey(), 'ActiveConfirmationPoCEvent: 0x1a')
  t.same(Buffer.from(paramsKey()), sim.PARAMS_KEY, '"p_inference"')
  t.same(Buffer.from(activeParticipantsKey(42n)), storeKey(42n), 'ActiveParticipants: the pre-collections key, reused from src/chain')
})
