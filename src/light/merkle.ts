import { sha256 } from '@noble/hashes/sha2.js'

// CometBFT's crypto/merkle.HashFromByteSlices: the RFC 6962 tree every hash a header commits
// to is built with (the header's own hash, the validator set's, the commit's, the results').
// A leaf is SHA-256(0x00 || item), an inner node SHA-256(0x01 || left || right); n items
// split at the largest power of two below n, so the left subtree is always full. The root of
// no items is SHA-256 of nothing, which CometBFT calls emptyHash.

const LEAF_PREFIX = Uint8Array.of(0)
const INNER_PREFIX = Uint8Array.of(1)

export function merkleRoot (items: readonly Uint8Array[]): Uint8Array {
  if (items.length === 0) return sha256(new Uint8Array())
  return subtreeRoot(items, 0, items.length)
}

/** The root of items[from, to), to - from >= 1; the depth is log2(n), so recursion is shallow. */
function subtreeRoot (items: readonly Uint8Array[], from: number, to: number): Uint8Array {
  const n = to - from
  if (n === 1) return sha256.create().update(LEAF_PREFIX).update(items[from] as Uint8Array).digest()
  const split = from + splitPoint(n)
  return sha256.create().update(INNER_PREFIX).update(subtreeRoot(items, from, split)).update(subtreeRoot(items, split, to)).digest()
}

/** The largest power of two strictly below n (n >= 2): CometBFT's getSplitPoint. */
export function splitPoint (n: number): number {
  let k = 1
  while (k * 2 < n) k *= 2
  return k
}
