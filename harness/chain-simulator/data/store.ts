import type { StoreEntry } from '../store-proof.js'
import {
  ACTIVE_PARTICIPANTS,
  CORRUPT_EPOCH,
  CURRENT_EPOCH,
  encodeActiveParticipants,
  EXTREME_EPOCH,
  EXTREME_PARTICIPANTS,
  GENESIS_EPOCH,
  GENESIS_PARTICIPANTS,
  LATEST_HEIGHT,
  PRUNED_EPOCH,
  storeKey,
  VERIFIABLE_CREATED_AT,
  VERIFIABLE_EPOCH,
  type StoredActiveParticipants
} from './epochs.js'
import { inferenceState } from './inference-state.js'

// The inference module's store as the simulator serves it (abci_query, and the app hash of
// every header: store-proof.ts): each epoch's ActiveParticipants (epochs.ts) and the
// collections the proven routes read (inference-state.ts).

/** Store key (hex) → value and the height it was written at. */
const STORE = new Map<string, { value: Uint8Array, height: bigint }>()

function put (epoch: number, a: StoredActiveParticipants, visibleFrom = a.created_at_block_height): void {
  STORE.set(storeKey(BigInt(epoch)).toString('hex'), { value: encodeActiveParticipants(a), height: visibleFrom })
}
put(CURRENT_EPOCH, ACTIVE_PARTICIPANTS)
put(GENESIS_EPOCH, GENESIS_PARTICIPANTS)
// Written at height 100: its created_at_block_height (int64 max) is a value, not when it was stored.
put(EXTREME_EPOCH, EXTREME_PARTICIPANTS, 100n)
put(VERIFIABLE_EPOCH, {
  ...ACTIVE_PARTICIPANTS,
  epoch_group_id: BigInt(VERIFIABLE_EPOCH),
  poc_start_block_height: BigInt(VERIFIABLE_CREATED_AT - 5),
  effective_block_height: BigInt(VERIFIABLE_CREATED_AT),
  created_at_block_height: BigInt(VERIFIABLE_CREATED_AT),
  epoch_id: BigInt(VERIFIABLE_EPOCH)
})
put(PRUNED_EPOCH, { ...GENESIS_PARTICIPANTS, created_at_block_height: 1000n, epoch_id: BigInt(PRUNED_EPOCH) }, BigInt(LATEST_HEIGHT))
// Field 1 (participants) declared as a varint: the Go decoder rejects it, so must edge-api.
STORE.set(storeKey(BigInt(CORRUPT_EPOCH)).toString('hex'), { value: Uint8Array.of(0x08, 0x01), height: 100n })
for (const entry of inferenceState()) STORE.set(entry.key.toString('hex'), { value: entry.value, height: entry.height })

/** Every entry of the store as of `height`, for its proofs (store-proof.ts). */
export function storeEntries (height: bigint): StoreEntry[] {
  return [...STORE].filter(([, e]) => e.height <= height).map(([hex, e]) => ({ key: Buffer.from(hex, 'hex'), value: e.value, version: e.height }))
}

/** The store value under `key` as of `height` (latest when undefined), or undefined. */
export function storeValue (key: Buffer, height?: bigint): Uint8Array | undefined {
  const entry = STORE.get(key.toString('hex'))
  if (entry === undefined || (height !== undefined && height < entry.height)) return undefined
  return entry.value
}
