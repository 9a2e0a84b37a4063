import { activeParticipantsKey } from '../chain/active-participants.js'

// The inference module's store keys the proven routes read (proven-routes.ts), as gonka
// writes them with cosmossdk.io/collections: the collection's prefix, then its key codec's
// bytes (Uint64Key: 8 bytes big-endian; a Pair's first half non-terminal, which for Uint64Key
// is the same 8 bytes; a terminal StringKey: the string's bytes). Prefixes from
// kaitakuai/gonka inference-chain/x/inference/types/keys.go@2b0162e1 ("These prefixes should
// NEVER change, only increase"; 10–12 the same at gonka-ai/gonka@312044d2), the collections
// from keeper/keeper.go@312044d2: EpochGroupDataMap Map[Pair[uint64, string]], Epochs
// Map[uint64], EffectiveEpochIndex Item[uint64], ActiveConfirmationPoCEvent an Item, the
// params at "p_inference". ActiveParticipants keeps its pre-collections key
// (src/chain/active-participants.ts). Keys change across upgrades (v0.2.12 renumbered three):
// a proof then fails as a mismatch, never passes a wrong value (docs/verified-reads.md).

/** The module store every key here is in (the ABCI path store/inference/key, the key path /inference/…). */
export const INFERENCE_STORE = 'inference'

const EPOCH_GROUP_DATA = 0x0a
const EPOCHS = 0x0b
const EFFECTIVE_EPOCH_INDEX = 0x0c
const ACTIVE_CONFIRMATION_POC_EVENT = 0x1a
const PARAMS = new TextEncoder().encode('p_inference')

function uint64Key (n: bigint): Uint8Array {
  const bytes = new Uint8Array(8)
  new DataView(bytes.buffer).setBigUint64(0, BigInt.asUintN(64, n))
  return bytes
}

function concat (...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((part) => [...part]))
}

/** EffectiveEpochIndex: the current epoch (get_current_epoch), a collections.Uint64Value. */
export const effectiveEpochIndexKey = (): Uint8Array => Uint8Array.of(EFFECTIVE_EPOCH_INDEX)

/** Epochs[index]: inference.inference.Epoch. */
export const epochKey = (index: bigint): Uint8Array => concat(Uint8Array.of(EPOCHS), uint64Key(index))

/** EpochGroupDataMap[(epoch, modelId)]: inference.inference.EpochGroupData; the parent group's modelId is "". */
export const epochGroupDataKey = (epoch: bigint, modelId: string): Uint8Array =>
  concat(Uint8Array.of(EPOCH_GROUP_DATA), uint64Key(epoch), new TextEncoder().encode(modelId))

/** ActiveConfirmationPoCEvent: inference.inference.ConfirmationPoCEvent, present while one is active. */
export const activeConfirmationPoCEventKey = (): Uint8Array => Uint8Array.of(ACTIVE_CONFIRMATION_POC_EVENT)

/** The module's params: inference.inference.Params. */
export const paramsKey = (): Uint8Array => PARAMS

export { activeParticipantsKey }

/** A key as the proven values are indexed by it: lower-case hex. */
export const keyId = (key: Uint8Array): string => Buffer.from(key).toString('hex')
