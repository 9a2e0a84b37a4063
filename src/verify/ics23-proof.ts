import { ics23, iavlSpec, tendermintSpec, verifyMembership, verifyNonMembership } from '@confio/ics23'
import { decompress } from '@confio/ics23/build/compress.js'
import { applyInner, applyLeaf } from '@confio/ics23/build/ops.js'
import { commitmentSpecProblem } from './ics23-spec.js'
import { keyPathToKeys } from './key-path.js'
import { proofLimitProblem } from './proof-limits.js'
import { NamedError } from '../named-error.js'

// The chain of ICS23 proofs an ABCI store query returns, checked as the Go service checked it
// (Cosmos SDK rootmulti.DefaultProofRuntime().VerifyValue): "ics23:iavl" proves the value
// under its key in the module's IAVL store, giving that store's root; "ics23:simple" proves
// that root under the module's name in the multistore, giving the app hash. Each op consumes
// the last unconsumed part of the key path. The hashing is @confio/ics23's; the chaining and
// every error text are CometBFT's and the SDK's, because the Go service answered them to
// clients ("proof verification failed: …"). Before any op is hashed, every op is checked
// against its spec's limits (proof-limits.ts), then, decompressed, against the spec as ics23
// Go checks it since Dragonberry (ics23-spec.ts: the IAVL op rule and what else 0.6.8 lacks),
// each refusal naming its reason; 0.6.8's own checks still run in its verify.

/** One op of a CometBFT ProofOps, bytes already decoded. */
export interface ProofOp {
  readonly type: string
  readonly key: Uint8Array
  readonly data: Uint8Array
}

/** A proof that does not verify; the message is the Go runtime's. */
export class ProofError extends NamedError {}

// The op types the SDK's default runtime registers, with the spec each one is checked against.
const SPECS = new Map<string, ics23.IProofSpec>([
  ['ics23:iavl', iavlSpec],
  ['ics23:simple', tendermintSpec]
])

interface Operator {
  readonly key: Uint8Array
  readonly spec: ics23.IProofSpec
  readonly proof: ics23.ICommitmentProof
}

/**
 * Verifies that `value` is stored under `keyPath` in the state whose root is `root` (the app
 * hash): CometBFT's ProofRuntime.VerifyValue. Throws ProofError with the message the Go
 * service gave.
 */
export function verifyValue (ops: readonly ProofOp[], root: Uint8Array, keyPath: string, value: Uint8Array): void {
  verifyChain(ops, root, keyPath, value)
}

/**
 * Verifies that nothing is stored under `keyPath` in the state whose root is `root`:
 * CometBFT's ProofRuntime.VerifyAbsence. The first op is a non-existence proof (its
 * neighbours' existence proofs, adjacent in the tree, on either side of the key); the
 * others prove its root as a value, as in verifyValue.
 */
export function verifyAbsence (ops: readonly ProofOp[], root: Uint8Array, keyPath: string): void {
  verifyChain(ops, root, keyPath, undefined)
}

/** ProofOperators.Verify: each op consumes the path's last unconsumed key; undefined `value` asks for absence. */
function verifyChain (ops: readonly ProofOp[], root: Uint8Array, keyPath: string, value: Uint8Array | undefined): void {
  const operators = ops.map(decodeOperator)
  let keys: Uint8Array[]
  try {
    keys = keyPathToKeys(keyPath)
  } catch (err) {
    throw new ProofError((err as Error).message)
  }
  let leaf = value
  operators.forEach((op, i) => {
    if (op.key.length !== 0) {
      const lastKey = keys.pop()
      if (lastKey === undefined) {
        throw new ProofError(`key path has insufficient # of parts: expected no more keys but got ${goString(op.key)}`)
      }
      if (!Buffer.from(lastKey).equals(op.key)) {
        throw new ProofError(`key mismatch on operation #${i}: expected ${goString(lastKey)} but got ${goString(op.key)}`)
      }
    }
    leaf = run(op, leaf)
  })
  // Go indexes args[0] here, which panics for an absence with no ops: nothing proved it.
  if (leaf === undefined) throw new ProofError('no proof operators: nothing proves the key absent')
  if (!Buffer.from(root).equals(leaf)) {
    throw new ProofError(`calculated root hash is invalid: expected ${hexUpper(root)} but got ${hexUpper(leaf)}`)
  }
  if (keys.length !== 0) throw new ProofError('keypath not consumed all')
}

function decodeOperator (op: ProofOp, i: number): Operator {
  const spec = SPECS.get(op.type)
  if (spec === undefined) throw new ProofError(`decoding proof: decoding a proof operator: unrecognized proof type ${op.type}`)
  let proof: ics23.ICommitmentProof
  try {
    proof = ics23.CommitmentProof.decode(op.data)
  } catch (err) {
    throw new ProofError(`decoding proof: decoding a proof operator: ${(err as Error).message}`)
  }
  const problem = proofLimitProblem(proof, spec)
  if (problem !== undefined) throw new ProofError(`proof of operation #${i} exceeds the ${op.type} spec's limits: ${problem}`)
  // Within the limits, decompressing only names inner ops already counted.
  const normal = decompress(proof)
  const specProblem = commitmentSpecProblem(normal, spec)
  if (specProblem !== undefined) throw new ProofError(`proof of operation #${i} does not meet the ${op.type} spec: ${specProblem}`)
  return { key: op.key, spec, proof: normal }
}

/** The SDK's CommitmentOp.Run: the root this op proves `value` (or, undefined, the key's absence) under. */
function run (op: Operator, value: Uint8Array | undefined): Uint8Array {
  let root: Uint8Array
  try {
    root = calculate(op.proof)
  } catch (err) {
    throw new ProofError(`could not calculate root for proof: ${(err as Error).message}: invalid proof`)
  }
  if (value === undefined) {
    if (!verifyNonMembership(op.proof, op.spec, root, op.key)) throw new ProofError(`proof did not verify absence of key: ${goString(op.key)}: invalid proof`)
  } else if (!verifyMembership(op.proof, op.spec, root, op.key, value)) {
    throw new ProofError(`proof did not verify existence of key ${goString(op.key)} with given value ${Buffer.from(value).toString('hex')}: invalid proof`)
  }
  return root
}

/** ics23's CommitmentProof.Calculate (Go, v0.11): the root implied by the (decompressed) proof alone. */
function calculate (proof: ics23.ICommitmentProof): Uint8Array {
  if (proof.exist != null) return existenceRoot(proof.exist)
  if (proof.nonexist != null) return nonExistenceRoot(proof.nonexist)
  if (proof.batch != null) {
    const first = proof.batch.entries?.[0]
    if (first == null) throw new Error('batch proof has empty entry')
    if (first.exist != null) return existenceRoot(first.exist)
    if (first.nonexist != null) return nonExistenceRoot(first.nonexist)
  }
  throw new Error('unrecognized proof type')
}

function nonExistenceRoot (proof: ics23.INonExistenceProof): Uint8Array {
  const side = proof.left ?? proof.right
  if (side == null) throw new Error('nonexistence proof has empty Left and Right proof')
  return existenceRoot(side)
}

function existenceRoot (proof: ics23.IExistenceProof): Uint8Array {
  // A decoded message has every scalar and repeated field (protobufjs defaults: empty), and
  // the spec check has refused a proof without a leaf, or with a hash or length op other
  // than the spec's (so neither step below can fail on its ops).
  const { leaf, key, value, path } = proof as { leaf: ics23.ILeafOp, key: Uint8Array, value: Uint8Array, path: ics23.IInnerOp[] }
  if (key.length === 0) throw new Error('leaf, leaf op needs key')
  if (value.length === 0) throw new Error('leaf, leaf op needs value')
  let hash = applyLeaf(leaf, key, value)
  for (const inner of path) hash = applyInner(inner, hash)
  return hash
}

/** Go's string(bytes) as it reaches a client through encoding/json: invalid UTF-8 becomes U+FFFD. */
function goString (bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('utf8')
}

function hexUpper (bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').toUpperCase()
}
