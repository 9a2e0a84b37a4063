import { Type, type Static } from 'typebox'
import { decodeBase64 } from '../wire/go-base64.js'
import { verifyAbsence, verifyValue, type ProofOp } from '../verify/ics23-proof.js'
import { pathEscape } from '../verify/key-path.js'

// The proof bundle `?proof=1` adds to a proven route's answer (docs/verified-reads.md,
// "Bundles for clients that verify themselves"; the reference's §3.3, EIP-1186's model):
// the store values the answer was derived from, each with the two proof ops
// (`ics23:iavl` under the module's root, `ics23:simple` under the app hash), the store
// version they were read at, and the app hash they prove against: header height + 1's
// `app_hash`. The client takes that header from its own light client
// (/v1/light/signed-header/{height + 1}, verified), never from the bundle, and checks each
// read with it (verifyBundle). Bytes are base64, as the ABCI query's JSON has them.

export const ProofBundleRead = Type.Object({
  store: Type.String({ description: 'the module store: the first key of the proof\'s key path' }),
  key: Type.String({ description: 'the store key, base64' }),
  value: Type.Union([Type.String({ description: 'the stored bytes, base64' }), Type.Null()], { description: 'null: the key is proven absent' }),
  proof_ops: Type.Array(Type.Object({
    type: Type.String({ description: '"ics23:iavl", then "ics23:simple"' }),
    key: Type.String({ description: 'base64' }),
    data: Type.String({ description: 'base64 of an ics23 CommitmentProof' })
  }))
})

export const ProofBundle = Type.Object({
  height: Type.String({ description: 'the store version the reads are at: a decimal string' }),
  app_hash: Type.String({ description: 'upper-case hex: the app hash they prove against, as the chain node gave it; a client compares it with its own verified header' }),
  header_height: Type.String({ description: 'height + 1: the signed header whose app_hash it is (/v1/light/signed-header/{header_height})' }),
  reads: Type.Array(ProofBundleRead)
}, { description: 'the store values this answer derives from, with their ICS23 proofs (docs/verified-reads.md)' })

export type ProofBundleJson = Static<typeof ProofBundle>
export type ProofBundleReadJson = Static<typeof ProofBundleRead>

/** A bundle of `reads` at store version `height`, proven against `appHash` (header height + 1's). */
export function proofBundle (height: bigint, appHash: Uint8Array, reads: readonly ProofBundleReadJson[]): ProofBundleJson {
  return {
    height: String(height),
    app_hash: Buffer.from(appHash).toString('hex').toUpperCase(),
    header_height: String(height + 1n),
    reads: [...reads]
  }
}

/**
 * Why `bundle` does not prove its reads under `appHash` (the app hash of a header the caller
 * verified, not the bundle's own), or undefined when every read verifies: its value under
 * its key, or its absence, through both proof ops.
 */
export function bundleProblem (bundle: ProofBundleJson, appHash: Uint8Array): string | undefined {
  for (const [i, read] of bundle.reads.entries()) {
    try {
      const key = bytes(read.key, `reads[${i}].key`)
      const ops: ProofOp[] = read.proof_ops.map((op, j) => ({ type: op.type, key: bytes(op.key, `reads[${i}].proof_ops[${j}].key`), data: bytes(op.data, `reads[${i}].proof_ops[${j}].data`) }))
      const keyPath = `/${read.store}/${pathEscape(key)}`
      if (read.value === null) verifyAbsence(ops, appHash, keyPath)
      else verifyValue(ops, appHash, keyPath, bytes(read.value, `reads[${i}].value`))
    } catch (err) {
      return `reads[${i}] (${read.store} ${read.key}): ${(err as Error).message}`
    }
  }
  return undefined
}

function bytes (text: string, field: string): Uint8Array {
  const decoded = decodeBase64(text)
  if (decoded === undefined) throw new Error(`${field} is not standard base64`)
  return decoded
}
