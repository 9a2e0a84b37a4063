import { iavlSpec, tendermintSpec, type ics23 } from '@confio/ics23'
import { iavlOpProblem } from './iavl-ops.js'
import { tendermintOpProblem } from './tendermint-ops.js'

// Whether a proof is in the shape its spec allows, as ics23 Go checks it today
// (ExistenceProof.CheckAgainstSpec, LeafOp/InnerOp.CheckAgainstSpec in go/proof.go and
// go/ops.go at 7f2c2d09), checked on the decoded proof before anything is hashed.
// @confio/ics23 0.6.8 (npm's last release, 2022-02) runs an older subset of this inside its
// verify and answers only true or false; what it lacks, all but one closed in Go after
// Dragonberry (Oct 2022):
// - the IAVL op rule (iavl-ops.ts) and the Tendermint op rule (tendermint-ops.ts);
// - a default depth: a spec without maxDepth allows 128 inner ops (#352; 0.6.8: unbounded);
// - an inner suffix that is not a whole number of children (ecbe025c, 2022-11);
// - an inner prefix equal to the leaf prefix (Go always refused it; 0.6.8's hasPrefix flags
//   only a longer one);
// - the spec itself: maxPrefixLength < minPrefixLength + childSize (#369), or else an
//   inner node's left child can pass for prefix padding, and a non-existence proof be forged
//   for a key that exists (upstream's TestForgeNonExistenceProofWithIncorrectMaxPrefixLength).
// The checks 0.6.8 shares are here too, so a refusal names its reason in Go's words.

/** ics23 Go's depth for a spec that sets no maxDepth (v0.11.0, #352). */
export const DEFAULT_MAX_DEPTH = 128

/** Why `proof` is not in the shape `spec` allows (Go's message), or undefined when it is. */
export function existenceSpecProblem (proof: ics23.IExistenceProof, spec: ics23.IProofSpec): string | undefined {
  if (proof.leaf == null) return 'existence Proof needs defined LeafOp'
  const leaf = leafSpecProblem(proof.leaf, spec)
  if (leaf !== undefined) return `leaf, ${leaf}`
  const path = proof.path ?? []
  const minDepth = num(spec.minDepth)
  if (minDepth > 0 && path.length < minDepth) return `innerOps depth too short: ${path.length}`
  const maxDepth = spec.maxDepth == null || spec.maxDepth === 0 ? DEFAULT_MAX_DEPTH : spec.maxDepth
  if (path.length > maxDepth) return `innerOps depth too long: ${path.length}`
  for (const [i, inner] of path.entries()) {
    // The layer is the op's distance from the leaf: an IAVL node's height is at least that.
    const problem = innerSpecProblem(inner, spec, i + 1)
    if (problem !== undefined) return `inner, ${problem}`
  }
  return undefined
}

/**
 * Every existence proof a (decompressed) commitment proof holds, checked against `spec`:
 * Go's wording for a non-existence proof's sides, "batch entry #i" before a batch entry's.
 */
export function commitmentSpecProblem (proof: ics23.ICommitmentProof, spec: ics23.IProofSpec): string | undefined {
  if (proof.exist != null) return existenceSpecProblem(proof.exist, spec)
  if (proof.nonexist != null) return nonExistenceSpecProblem(proof.nonexist, spec)
  for (const [i, entry] of (proof.batch?.entries ?? []).entries()) {
    const problem = entry.exist != null ? existenceSpecProblem(entry.exist, spec) : entry.nonexist != null ? nonExistenceSpecProblem(entry.nonexist, spec) : undefined
    if (problem !== undefined) return `batch entry #${i}: ${problem}`
  }
  return undefined
}

function nonExistenceSpecProblem (proof: ics23.INonExistenceProof, spec: ics23.IProofSpec): string | undefined {
  const left = proof.left == null ? undefined : existenceSpecProblem(proof.left, spec)
  if (left !== undefined) return `left proof, ${left}`
  const right = proof.right == null ? undefined : existenceSpecProblem(proof.right, spec)
  return right === undefined ? undefined : `right proof, ${right}`
}

/** LeafOp.CheckAgainstSpec: why `leaf` is not the leaf `spec` describes, or undefined. */
export function leafSpecProblem (leaf: ics23.ILeafOp, spec: ics23.IProofSpec): string | undefined {
  const leafSpec = spec.leafSpec
  if (leafSpec == null) return 'spec.LeafSpec must be non-nil'
  if (specEquals(spec, iavlSpec)) {
    const problem = iavlOpProblem(leaf, 0)
    if (problem !== undefined) return problem
  }
  if (num(leaf.hash) !== num(leafSpec.hash)) return `unexpected HashOp: ${num(leaf.hash)}`
  if (num(leaf.prehashKey) !== num(leafSpec.prehashKey)) return `unexpected PrehashKey: ${num(leaf.prehashKey)}`
  if (num(leaf.prehashValue) !== num(leafSpec.prehashValue)) return `unexpected PrehashValue: ${num(leaf.prehashValue)}`
  if (num(leaf.length) !== num(leafSpec.length)) return `unexpected LengthOp: ${num(leaf.length)}`
  const prefix = bytesOf(leafSpec.prefix)
  if (!startsWith(leaf.prefix, prefix)) return `leaf Prefix doesn't start with ${hexUpper(prefix)}`
  return undefined
}

/** InnerOp.CheckAgainstSpec: why `inner`, `layer` steps above the leaf, is not an inner node of `spec`, or undefined. */
export function innerSpecProblem (inner: ics23.IInnerOp, spec: ics23.IProofSpec, layer: number): string | undefined {
  const { innerSpec, leafSpec } = spec
  if (innerSpec == null) return 'spec.InnerSpec must be non-nil'
  if (leafSpec == null) return 'spec.LeafSpec must be non-nil'
  if (num(inner.hash) !== num(innerSpec.hash)) return `unexpected HashOp: ${num(inner.hash)}`
  const storeRule = specEquals(spec, iavlSpec) ? iavlOpProblem(inner, layer) : specEquals(spec, tendermintSpec) ? tendermintOpProblem(inner) : undefined
  if (storeRule !== undefined) return storeRule
  const leafPrefix = bytesOf(leafSpec.prefix)
  // Domain separation: a node whose prefix is (or starts with) the leaf prefix could pass
  // for a leaf, and a leaf for it.
  if (startsWith(inner.prefix, leafPrefix)) return `inner Prefix starts with ${hexUpper(leafPrefix)}`
  const prefix = bytesOf(inner.prefix).length
  const childSize = num(innerSpec.childSize)
  const minPrefix = num(innerSpec.minPrefixLength)
  const maxPrefix = num(innerSpec.maxPrefixLength)
  if (prefix < minPrefix) return `innerOp prefix too short (${prefix})`
  // The prefix holds the spec's own bytes and every child to the left of this one.
  const maxLeftChildBytes = ((innerSpec.childOrder ?? []).length - 1) * childSize
  if (prefix > maxPrefix + maxLeftChildBytes) return `innerOp prefix too long (${prefix})`
  if (childSize <= 0) return 'spec.InnerSpec.ChildSize must be >= 1'
  if (maxPrefix >= minPrefix + childSize) {
    return 'spec.InnerSpec.MaxPrefixLength must be < spec.InnerSpec.MinPrefixLength + spec.InnerSpec.ChildSize'
  }
  // The suffix holds whole children (those to the right), nothing else.
  if (bytesOf(inner.suffix).length % childSize !== 0) return 'InnerOp suffix malformed'
  return undefined
}

/** ProofSpec.SpecEquals: Go's own loose equality (the leaf prefix and the child order's values are not compared). */
export function specEquals (a: ics23.IProofSpec, b: ics23.IProofSpec): boolean {
  return sameFields(a.leafSpec, b.leafSpec, ['hash', 'prehashKey', 'prehashValue', 'length']) &&
    sameFields(a.innerSpec, b.innerSpec, ['hash', 'minPrefixLength', 'maxPrefixLength', 'childSize']) &&
    (a.innerSpec?.childOrder ?? []).length === (b.innerSpec?.childOrder ?? []).length
}

/** Both absent, or both present with the same numbers in `fields`. */
function sameFields<T extends object> (a: T | null | undefined, b: T | null | undefined, fields: ReadonlyArray<keyof T>): boolean {
  if (a == null || b == null) return (a == null) === (b == null)
  return fields.every((field) => num(a[field] as number | null | undefined) === num(b[field] as number | null | undefined))
}

/** A field a message may leave unset, as Go reads it: zero, or no bytes. */
function num (value: number | null | undefined): number {
  return value ?? 0
}

function bytesOf (value: Uint8Array | null | undefined): Uint8Array {
  return value ?? new Uint8Array()
}

/** Go's bytes.HasPrefix: an empty prefix starts everything. */
function startsWith (bytes: Uint8Array | null | undefined, prefix: Uint8Array): boolean {
  const whole = bytesOf(bytes)
  return whole.length >= prefix.length && prefix.every((byte, i) => whole[i] === byte)
}

function hexUpper (bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').toUpperCase()
}
