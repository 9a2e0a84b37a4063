import { ics23 } from '@confio/ics23'

// The IAVL op rule, ics23 Go's validateIavlOps (go/ops.go; added after Dragonberry, ecbe025c,
// 2022-11, "add version changes from sdk"; spelled out in #383, 5bb1b546; the leaf's height 0
// and size 1 since #386, 315aa71, after v0.11.0). @confio/ics23 0.6.8 predates it and checks
// only that a leaf's prefix starts with 0x00: the bytes after it were free, so a proof could
// move the boundary between the prefix and the length-prefixed key and prove a value under a
// key the tree does not hold (the key a suffix of a real key whose preceding byte is its
// length). An IAVL node's hash preimage begins with its zigzag varint height, size and
// version; a leaf's prefix is exactly those three (height 0, size 1), and an inner node's is
// those three then its left child's length byte (the child comes from the left: 1 byte
// remains) or the length byte, the 32-byte left hash and the next length byte (from the right:
// 34 remain). The messages are Go's.

/** binary.MaxVarintLen64 */
const MAX_VARINT_BYTES = 10

type Varint = { readonly value: bigint, readonly next: number } | { readonly error: string }

/** Go's binary.ReadVarint over `bytes` from `offset`: a zigzag int64, or Go's error text. */
export function readVarint (bytes: Uint8Array, offset: number): Varint {
  let unsigned = 0n
  for (let i = 0; i < MAX_VARINT_BYTES; i++) {
    const byte = bytes[offset + i]
    if (byte === undefined) return { error: i === 0 ? 'EOF' : 'unexpected EOF' }
    if (byte < 0x80) {
      if (i === MAX_VARINT_BYTES - 1 && byte > 1) break
      unsigned |= BigInt(byte) << BigInt(7 * i)
      const value = (unsigned & 1n) === 0n ? unsigned >> 1n : -(unsigned >> 1n) - 1n
      return { value, next: offset + i + 1 }
    }
    unsigned |= BigInt(byte & 0x7f) << BigInt(7 * i)
  }
  return { error: 'binary: varint overflows a 64-bit integer' }
}

/** An op of an IAVL proof as ics23 encodes it: its prefix and its hash op. */
export interface IavlOp {
  readonly prefix?: Uint8Array | null
  readonly hash?: ics23.HashOp | null
}

/**
 * Why `op` is not an IAVL node at `layer` (0 for the leaf, 1 for the inner op just above it,
 * and so on), or undefined when it is.
 */
export function iavlOpProblem (op: IavlOp, layer: number): string | undefined {
  const prefix = op.prefix ?? new Uint8Array()
  const height = readVarint(prefix, 0)
  if ('error' in height) return `failed to read IAVL height varint: ${height.error}`
  // A node's height is at least its distance from the leaf.
  if (height.value < 0n || height.value < BigInt(layer)) {
    return `IAVL height (${height.value}) must be non-negative and greater than or equal to the layer number (${layer})`
  }
  const size = readVarint(prefix, height.next)
  if ('error' in size) return `failed to read IAVL size varint: ${size.error}`
  if (size.value < 0n) return 'IAVL size must be non-negative'
  const version = readVarint(prefix, size.next)
  if ('error' in version) return `failed to read IAVL version varint: ${version.error}`
  if (version.value < 0n) return 'IAVL version must be non-negative'
  const remainder = prefix.length - version.next
  return layer === 0 ? leafProblem(remainder, height.value, size.value) : innerProblem(remainder, op.hash)
}

function leafProblem (remainder: number, height: bigint, size: bigint): string | undefined {
  if (remainder !== 0) return `expected remaining prefix length to be 0, got: ${remainder}`
  // Go prints the remainder (always 0 here) in the next two; the value is what names the fault.
  if (height !== 0n) return `expected leaf node height to be 0, got: ${height}`
  if (size !== 1n) return `expected leaf node size to be 1, got: ${size}`
  return undefined
}

function innerProblem (remainder: number, hash: ics23.HashOp | null | undefined): string | undefined {
  if (remainder !== 1 && remainder !== 34) return `remainder of prefix must be of length 1 or 34, got: ${remainder}`
  if (hash !== ics23.HashOp.SHA256) return 'IAVL hash op must be SHA256'
  return undefined
}
