import t from 'tap'
import { bls12_381 as bls12381 } from '@noble/curves/bls12-381.js'
import { g1Uncompressed128, g2Uncompressed256 } from '../../src/chain/bls-points.js'
import { FINAL_MESSAGE, FINAL_SIGNATURE, G1_OUTSIDE_SUBGROUP, G2_NOT_ON_CURVE, GROUP_PUBLIC_KEY, GROUP_SECRET, VALIDATION_MESSAGE, VALIDATION_SIGNATURE } from '../../harness/chain-simulator/data/bls.js'

const { G1, G2 } = bls12381
const { Fp, Fp2 } = bls12381.fields
const ZERO_PAD = new Uint8Array(16)

/** A base-field element as the 64-byte big-endian limb the contracts read. */
const limb = (n: bigint): Uint8Array => Uint8Array.from([...ZERO_PAD, ...Fp.toBytes(n)])
const slice = (bytes: Uint8Array, index: number, size: number): Uint8Array => bytes.subarray(index * size, (index + 1) * size)

t.test('the simulator\'s points are noble\'s, made from its fixed secret: the group key, and signatures that verify under it', async (t) => {
  const bls = bls12381.shortSignatures
  t.same(bls.getPublicKey(GROUP_SECRET).toBytes(true), GROUP_PUBLIC_KEY, 'the group public key')
  for (const [message, signature] of [[VALIDATION_MESSAGE, VALIDATION_SIGNATURE], [FINAL_MESSAGE, FINAL_SIGNATURE]] as const) {
    const hashed = bls.hash(new TextEncoder().encode(message))
    t.same(bls.Signature.toBytes(bls.sign(hashed, GROUP_SECRET)), signature, `the signature of "${message}"`)
    t.ok(bls.verify(bls.Signature.fromBytes(signature), hashed, bls.getPublicKey(GROUP_SECRET)), 'and it verifies')
  }
  t.same(G2_NOT_ON_CURVE.subarray(0, 95), GROUP_PUBLIC_KEY.subarray(0, 95), 'the off-curve G2 encoding is the group key with its last byte changed')
})

t.test('G1: 48 compressed bytes become X ‖ Y, each 48-byte coordinate right-aligned in 64', async (t) => {
  for (const k of [1n, 7n, 0x1234_5678_9abc_def0n]) {
    const point = G1.Point.BASE.multiply(k)
    const out = g1Uncompressed128(point.toBytes(true)) as Uint8Array
    t.equal(out.length, 128)
    const { x, y } = point.toAffine()
    t.same(slice(out, 0, 64), limb(x), 'limb 0 is X')
    t.same(slice(out, 1, 64), limb(y), 'limb 1 is Y')
    // noble's uncompressed bytes are X ‖ Y (48 each): the limbs hold them unchanged.
    const raw = point.toBytes(false)
    t.same(out.subarray(16, 64), slice(raw, 0, 48))
    t.same(out.subarray(80, 128), slice(raw, 1, 48))
    t.same(out.subarray(0, 16), ZERO_PAD)
    t.same(out.subarray(64, 80), ZERO_PAD)
  }
})

t.test('G2: 96 compressed bytes become X.c0 ‖ X.c1 ‖ Y.c0 ‖ Y.c1, each right-aligned in 64', async (t) => {
  for (const k of [1n, 42n, 0xfedc_ba98_7654_3210n]) {
    const point = G2.Point.BASE.multiply(k)
    const out = g2Uncompressed256(point.toBytes(true)) as Uint8Array
    t.equal(out.length, 256)
    const { x, y } = point.toAffine()
    t.same(slice(out, 0, 64), limb(x.c0), 'limb 0 is X.c0')
    t.same(slice(out, 1, 64), limb(x.c1), 'limb 1 is X.c1')
    t.same(slice(out, 2, 64), limb(y.c0), 'limb 2 is Y.c0')
    t.same(slice(out, 3, 64), limb(y.c1), 'limb 3 is Y.c1')
    // noble's (ZCash/IETF) uncompressed bytes are X.c1 ‖ X.c0 ‖ Y.c1 ‖ Y.c0: each pair swaps.
    const raw = point.toBytes(false)
    t.same(slice(out, 0, 64).subarray(16), slice(raw, 1, 48), 'X.c0 is the 2nd 48 bytes of noble')
    t.same(slice(out, 1, 64).subarray(16), slice(raw, 0, 48), 'X.c1 is the 1st')
    t.same(slice(out, 2, 64).subarray(16), slice(raw, 3, 48), 'Y.c0 is the 4th')
    t.same(slice(out, 3, 64).subarray(16), slice(raw, 2, 48), 'Y.c1 is the 3rd')
    for (let i = 0; i < 4; i++) t.same(slice(out, i, 64).subarray(0, 16), ZERO_PAD)
  }
})

t.test('the point at infinity is no key and no signature', async (t) => {
  t.equal(g1Uncompressed128(G1.Point.ZERO.toBytes(true)), null)
  t.equal(g2Uncompressed256(G2.Point.ZERO.toBytes(true)), null)
})

t.test('wrong lengths and uncompressed encodings are refused', async (t) => {
  const g1 = G1.Point.BASE.multiply(3n)
  const g2 = G2.Point.BASE.multiply(3n)
  t.equal(g1Uncompressed128(g1.toBytes(true).subarray(1)), null, '47 bytes')
  t.equal(g1Uncompressed128(g1.toBytes(false)), null, 'G1 uncompressed (96 bytes)')
  t.equal(g1Uncompressed128(g2.toBytes(true)), null, 'a G2 point is no G1 signature')
  t.equal(g2Uncompressed256(g2.toBytes(true).subarray(1)), null, '95 bytes')
  t.equal(g2Uncompressed256(g2.toBytes(false)), null, 'G2 uncompressed (192 bytes)')
  t.equal(g2Uncompressed256(new Uint8Array(0)), null, 'empty')
})

t.test('encodings that are not curve points are refused', async (t) => {
  const flagless = G1.Point.BASE.multiply(5n).toBytes(true)
  flagless[0] = (flagless[0] as number) & 0x1f
  t.equal(g1Uncompressed128(flagless), null, '48 bytes without the compressed flag')
  t.throws(() => G2.Point.fromBytes(G2_NOT_ON_CURVE), 'the fixture really is off the curve')
  t.equal(g2Uncompressed256(G2_NOT_ON_CURVE), null)
  const xTooBig = Uint8Array.from(Fp.toBytes(Fp.ORDER - 1n))
  xTooBig.fill(0xff, 1)
  xTooBig[0] = 0x9f // compressed flag on, x ≥ p
  t.equal(g1Uncompressed128(xTooBig), null, 'x outside the field')
})

t.test('points on the curve but outside the prime-order subgroup are refused', async (t) => {
  t.throws(() => G1.Point.fromBytes(G1_OUTSIDE_SUBGROUP), /./, 'noble rejects the G1 fixture')
  t.ok(Fp.sqrt(Fp.add(Fp.pow(Fp.fromBytes(withoutFlags(G1_OUTSIDE_SUBGROUP)), 3n), 4n)) !== undefined, 'its x is on the curve')
  t.equal(g1Uncompressed128(G1_OUTSIDE_SUBGROUP), null)

  const g2 = g2OutsideSubgroup()
  t.throws(() => G2.Point.fromBytes(g2))
  t.equal(g2Uncompressed256(g2), null)
})

function withoutFlags (bytes: Uint8Array): Uint8Array {
  const copy = Uint8Array.from(bytes)
  copy[0] = (copy[0] as number) & 0x1f
  return copy
}

/** x = (i, 0) with a y on the twist y² = x³ + 4(1 + u): on the curve, almost surely not in G2. */
function g2OutsideSubgroup (): Uint8Array {
  const b = Fp2.create({ c0: 4n, c1: 4n })
  for (let i = 1n; i < 100n; i++) {
    const x = Fp2.create({ c0: i, c1: 0n })
    try {
      Fp2.sqrt(Fp2.add(Fp2.pow(x, 3n), b))
    } catch {
      continue
    }
    // Compressed G2: X.c1 ‖ X.c0 with the compressed flag.
    const bytes = Uint8Array.from([...Fp.toBytes(x.c1), ...Fp.toBytes(x.c0)])
    bytes[0] = (bytes[0] as number) | 0x80
    try {
      G2.Point.fromBytes(bytes)
    } catch {
      return bytes
    }
  }
  throw new Error('no G2 point outside the subgroup found')
}

t.test('answers are remembered per compressed point, for a bounded number of points', async (t) => {
  const key = G2.Point.BASE.multiply(99n).toBytes(true)
  const first = g2Uncompressed256(key)
  t.equal(g2Uncompressed256(Uint8Array.from(key)), first, 'the same bytes get the very same answer: not decoded again')
  const signature = G1.Point.BASE.multiply(5n).toBytes(true)
  const remembered = g1Uncompressed128(signature)
  t.equal(g1Uncompressed128(signature), remembered)
  // 256 other points (cheap to refuse: a wrong length) push the first one out.
  for (let i = 0; i < 256; i++) g1Uncompressed128(Uint8Array.of(i))
  const decodedAgain = g1Uncompressed128(signature)
  t.not(decodedAgain, remembered, 'an evicted point is decoded again')
  t.same(decodedAgain, remembered, 'to the same bytes')
})
