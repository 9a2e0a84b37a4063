import { isUnservableHeight } from '../chain/height-headers.js'
import type { ChainReader } from '../chain/types.js'
import { ChainHeightUnavailableError, ChainStatusError } from '../errors.js'
import { verifyAbsence, verifyValue, type ProofOp } from '../verify/ics23-proof.js'
import type { VerifiedAppHashes } from './app-hashes.js'

// One store key read with its proof at a verified height V (docs/verified-reads.md, "Proven
// answers"): `abci_query?prove=true` at V, through the chain client's read path (limited,
// timed out, counted, traced), from the node the reader is bound to; then both proof ops
// verified: "ics23:iavl" proves the value (or the key's absence) under the module's IAVL
// root, "ics23:simple" that root under the app hash of header V + 1, which only a verified
// header may give (VerifiedAppHashes). Nothing the node says is taken on its word: not the
// value, not its absence, not the height it answered at.

const ABCI_QUERY = '/cosmos/base/tendermint/v1beta1/abci_query'

/** What one proven read gives: the value, its proven absence, or why there is no proven answer. */
export type ProvenRead =
  /** The value under the key at V, proven. */
  | { readonly kind: 'value', readonly value: Uint8Array }
  /** Proven absent at V (a non-existence proof: the key's neighbours, adjacent in the tree). */
  | { readonly kind: 'absent' }
  /** The node's answer does not verify (a changed value, a missing or wrong proof, another height): the node lies. */
  | { readonly kind: 'forged', readonly reason: string }
  /** No verified header V + 1 yet: nothing to verify against (no request was sent). */
  | { readonly kind: 'not-yet' }
  /** The node no longer holds state V (pruned): not a lie, another node may. */
  | { readonly kind: 'pruned', readonly reason: string }

/** A store key: the module store it is in and its raw bytes. */
export interface StoreKey {
  readonly store: string
  readonly key: Uint8Array
}

interface AbciAnswer {
  code?: number
  log?: string
  value?: string | null
  proof_ops?: { ops?: Array<{ type?: string, key?: string, data?: string }> | null } | null
  height?: string
}

// The SDK's words for a version the store no longer has, in an ABCI answer's log
// (store/rootmulti "proof is unexpectedly empty; ensure height has not been pruned", iavl's
// "version does not exist", baseapp's "failed to load state at height").
const PRUNED_LOG = /pruned|version does not exist|failed to load state at height/

/**
 * Reads `key` at `height` (V) with `reader` (bound to one node: ChainClient.fromNode) and
 * verifies it against the app hash of header V + 1. A chain error other than a pruned height
 * (the node down, timed out) is thrown as the read's error.
 */
export async function proveValue (reader: ChainReader, hashes: VerifiedAppHashes, { store, key }: StoreKey, height: number): Promise<ProvenRead> {
  const appHash = hashes.appHashAfter(height)
  if (appHash === undefined) return { kind: 'not-yet' }
  let answer: AbciAnswer
  try {
    answer = await reader.get(ABCI_QUERY, { path: `store/${store}/key`, data: Buffer.from(key).toString('base64'), height: String(height), prove: 'true' }) as AbciAnswer
  } catch (err) {
    if (err instanceof ChainHeightUnavailableError || (err instanceof ChainStatusError && isUnservableHeight(err.message))) return { kind: 'pruned', reason: err.message }
    throw err
  }
  const code = answer.code ?? 0
  if (code !== 0) {
    const log = answer.log ?? ''
    if (PRUNED_LOG.test(log)) return { kind: 'pruned', reason: log }
    throw new ChainStatusError(2, `abci_query answered code ${code} for a proven read: ${log}`)
  }
  return verified(answer, appHash, { store, key }, height)
}

/** The answer checked against `appHash`: its height, its proof ops, then the value or the absence they prove. */
function verified (answer: AbciAnswer, appHash: Uint8Array, { store, key }: StoreKey, height: number): ProvenRead {
  if (answer.height !== String(height)) return { kind: 'forged', reason: `answered at height ${answer.height ?? '(none)'}, asked ${height}` }
  const ops = (answer.proof_ops?.ops ?? []).map(proofOp)
  if (ops.length === 0) return { kind: 'forged', reason: 'no proof ops: nothing proves the answer' }
  const value = typeof answer.value === 'string' && answer.value !== '' ? Buffer.from(answer.value, 'base64') : undefined
  // The same path the SDK's verifier is given ("/<store>/<key>"), the key as hex so no escaping matters.
  const keyPath = `/${store}/x:${Buffer.from(key).toString('hex')}`
  try {
    if (value === undefined) verifyAbsence(ops, appHash, keyPath)
    else verifyValue(ops, appHash, keyPath, value)
  } catch (err) {
    // ProofError, or anything else the node's bytes make the verifier throw: unproven either way.
    return { kind: 'forged', reason: (err as Error).message }
  }
  return value === undefined ? { kind: 'absent' } : { kind: 'value', value }
}

function proofOp (op: { type?: string, key?: string, data?: string }): ProofOp {
  return { type: op.type ?? '', key: Buffer.from(op.key ?? '', 'base64'), data: Buffer.from(op.data ?? '', 'base64') }
}
