import { bls12_381 as bls12381 } from '@noble/curves/bls12-381.js'

// Compressed BLS12-381 points as the chain stores them, re-encoded in the fixed-width,
// uncompressed layout that EVM bridge contracts read (the Go service's blst/gnark layout):
// every 48-byte base-field coordinate right-aligned in a 64-byte big-endian limb. All curve
// work (decompression, on-curve and subgroup checks) is noble's; this file only moves bytes.

const FP_BYTES = 48
const LIMB_BYTES = 64
const G1_COMPRESSED_BYTES = 48
const G2_COMPRESSED_BYTES = 96

// Decompression with its subgroup check costs milliseconds of CPU per point, and clients poll
// the same epochs and signatures over and over: the last few hundred answers are kept. The key
// is the compressed bytes themselves, so an answer can never be served for another point.
const REMEMBERED_POINTS = 256

function remembered (encode: (compressed: Uint8Array) => Uint8Array | null): (compressed: Uint8Array) => Uint8Array | null {
  const answers = new Map<string, Uint8Array | null>()
  return (compressed) => {
    const key = Buffer.from(compressed).toString('hex')
    if (answers.has(key)) return answers.get(key) as Uint8Array | null
    const answer = encode(compressed)
    if (answers.size >= REMEMBERED_POINTS) answers.delete(answers.keys().next().value as string)
    answers.set(key, answer)
    return answer
  }
}

/**
 * A 48-byte compressed G1 point (a BLS signature) as 128 bytes: X, Y. Null unless the bytes
 * decode to a point of the prime-order subgroup other than infinity (blst's SigValidate(true)).
 * The result is shared between callers: do not modify it.
 */
export const g1Uncompressed128 = remembered((compressed) => {
  if (compressed.length !== G1_COMPRESSED_BYTES) return null
  let point
  try {
    // fromBytes checks the encoding flags, that x is canonical, on-curve and in the subgroup.
    point = bls12381.G1.Point.fromBytes(compressed)
  } catch {
    return null
  }
  if (point.is0()) return null
  // Uncompressed G1 bytes are X ‖ Y.
  return limbs(point.toBytes(false), [0, 1])
})

/**
 * A 96-byte compressed G2 point (the group public key) as 256 bytes: X.c0, X.c1, Y.c0, Y.c1.
 * Null unless the bytes decode to a subgroup point other than infinity (blst's KeyValidate).
 * The result is shared between callers: do not modify it.
 */
export const g2Uncompressed256 = remembered((compressed) => {
  if (compressed.length !== G2_COMPRESSED_BYTES) return null
  let point
  try {
    point = bls12381.G2.Point.fromBytes(compressed)
  } catch {
    return null
  }
  if (point.is0()) return null
  // Uncompressed G2 bytes follow the ZCash/IETF order X.c1 ‖ X.c0 ‖ Y.c1 ‖ Y.c0; the
  // contracts want c0 before c1, so each coordinate's halves swap.
  return limbs(point.toBytes(false), [1, 0, 3, 2])
})

/** Copies the 48-byte field elements of `raw`, in `order`, each right-aligned in 64 bytes. */
function limbs (raw: Uint8Array, order: readonly number[]): Uint8Array {
  const out = new Uint8Array(order.length * LIMB_BYTES)
  order.forEach((element, i) => {
    const start = element * FP_BYTES
    out.set(raw.subarray(start, start + FP_BYTES), i * LIMB_BYTES + (LIMB_BYTES - FP_BYTES))
  })
  return out
}
