import type { ics23 } from '@confio/ics23'

// The Tendermint (simple merkle) inner op rule, ics23 Go's validateTendermintOps (go/ops.go,
// #386, 315aa71, 2024-10; after v0.11.0, so gonka's Go does not have it yet, and
// @confio/ics23 0.6.8 never did). A simple merkle inner node hashes 0x01 ‖ left ‖ right
// (RFC 6962): the child from the left has prefix exactly 0x01 and the right hash as suffix,
// the child from the right has prefix 0x01 ‖ left hash and no suffix. Any other prefix is not
// a node of that tree. The messages are Go's.

/** Why `op` is not a simple merkle inner node, or undefined when it is. */
export function tendermintOpProblem (op: ics23.IInnerOp): string | undefined {
  const prefix = op.prefix ?? new Uint8Array()
  if (prefix.length === 0) return 'inner op prefix must not be empty'
  // Go asks whether the suffix is nil: a decoded message has the field as its own property
  // exactly when the proof carried it, empty or not (protobufjs, like gogoproto).
  if (Object.hasOwn(op, 'suffix') && op.suffix != null && !(prefix.length === 1 && prefix[0] === 1)) {
    return `expected inner op prefix: [1], got: ${goBytes(prefix)}`
  }
  if (prefix[0] !== 1) return `expected inner op prefix to begin with: [1], got: ${goBytes(prefix.subarray(0, 1))}`
  return undefined
}

/** Go's %v of a []byte: "[0 1 255]". */
function goBytes (bytes: Uint8Array): string {
  return `[${Array.from(bytes).join(' ')}]`
}
