import type { ics23 } from '@confio/ics23'

// What a proof may ask of us, checked on the decoded proof before any hashing or
// decompression. ics23 checks a proof against its spec only after computing its root, and a
// compressed batch multiplies its inner ops by reference: one 10 KB prefix named 4,500 times
// in a 19 KB body is 45 MB to hash. The limits are the spec's own (ics23's iavlSpec and
// tendermintSpec: an inner op's prefix at most maxPrefixLength plus the left children, its
// suffix at most the right children), and a depth: neither spec sets maxDepth,
// so the deepest ics23 defines (smtSpec's 256; an IAVL tree, AVL-balanced, is under 100 deep
// even at 2^64 keys). Within them one op hashes at most a few hundred small inner nodes.

/** ics23's smtSpec.maxDepth, the deepest path of any spec it ships. */
export const MAX_PROOF_DEPTH = 256
/** Entries of a batch proof (the SDK's proofs are single existence proofs; a batch is never needed). */
export const MAX_BATCH_ENTRIES = 256

/** Why `proof` is beyond what `spec` allows, or undefined when it is within. */
export function proofLimitProblem (proof: ics23.ICommitmentProof, spec: ics23.IProofSpec): string | undefined {
  if (proof.exist != null) return existProblem(proof.exist, 'exist', spec)
  if (proof.nonexist != null) return nonexistProblem(proof.nonexist, 'nonexist', spec)
  if (proof.batch != null) {
    const entries = proof.batch.entries ?? []
    return entriesProblem(entries.length, 'batch') ?? first(entries, (entry, i) => {
      const where = `batch.entries[${i}]`
      if (entry.exist != null) return existProblem(entry.exist, `${where}.exist`, spec)
      return entry.nonexist == null ? undefined : nonexistProblem(entry.nonexist, `${where}.nonexist`, spec)
    })
  }
  if (proof.compressed != null) return compressedProblem(proof.compressed, spec)
  return undefined
}

function compressedProblem (batch: ics23.ICompressedBatchProof, spec: ics23.IProofSpec): string | undefined {
  const lookup = batch.lookupInners ?? []
  const entries = batch.entries ?? []
  const pathProblem = (exist: ics23.ICompressedExistenceProof | null | undefined, where: string): string | undefined => {
    const path = exist?.path ?? []
    if (path.length > MAX_PROOF_DEPTH) return `${where}.path has ${path.length} steps, at most ${MAX_PROOF_DEPTH}`
    const outside = path.findIndex((index) => index < 0 || index >= lookup.length)
    return outside === -1 ? undefined : `${where}.path[${outside}] names no entry of lookup_inners`
  }
  return entriesProblem(entries.length, 'compressed') ??
    first(lookup, (inner, i) => innerProblem(inner, `compressed.lookup_inners[${i}]`, spec)) ??
    first(entries, (entry, i) => {
      const where = `compressed.entries[${i}]`
      if (entry.exist != null) return pathProblem(entry.exist, `${where}.exist`)
      const non = entry.nonexist
      return non == null ? undefined : pathProblem(non.left, `${where}.nonexist.left`) ?? pathProblem(non.right, `${where}.nonexist.right`)
    })
}

function nonexistProblem (proof: ics23.INonExistenceProof, where: string, spec: ics23.IProofSpec): string | undefined {
  return (proof.left == null ? undefined : existProblem(proof.left, `${where}.left`, spec)) ??
    (proof.right == null ? undefined : existProblem(proof.right, `${where}.right`, spec))
}

function existProblem (proof: ics23.IExistenceProof, where: string, spec: ics23.IProofSpec): string | undefined {
  const path = proof.path ?? []
  if (path.length > MAX_PROOF_DEPTH) return `${where}.path has ${path.length} steps, at most ${MAX_PROOF_DEPTH}`
  return first(path, (inner, i) => innerProblem(inner, `${where}.path[${i}]`, spec))
}

/**
 * ics23's ensureInner upper bounds, checked before the op is hashed rather than after. What
 * costs nothing to hash (a prefix too short) is left to ics23, which refuses it with the
 * message the Go service gave.
 */
function innerProblem (inner: ics23.IInnerOp, where: string, spec: ics23.IProofSpec): string | undefined {
  // Both specs set all three (SPECS in ics23-proof.ts has no other).
  const { childOrder, childSize, maxPrefixLength } = spec.innerSpec as { childOrder: number[], childSize: number, maxPrefixLength: number }
  const otherChildren = (childOrder.length - 1) * childSize
  const maxPrefix = maxPrefixLength + otherChildren
  const prefix = inner.prefix?.length ?? 0
  const suffix = inner.suffix?.length ?? 0
  if (prefix > maxPrefix) return `${where}.prefix is ${prefix} bytes, the spec allows at most ${maxPrefix}`
  if (suffix > otherChildren) return `${where}.suffix is ${suffix} bytes, the spec allows at most ${otherChildren}`
  return undefined
}

function entriesProblem (count: number, where: string): string | undefined {
  return count > MAX_BATCH_ENTRIES ? `${where} has ${count} entries, at most ${MAX_BATCH_ENTRIES}` : undefined
}

function first<T> (items: readonly T[], problem: (item: T, i: number) => string | undefined): string | undefined {
  for (const [i, item] of items.entries()) {
    const found = problem(item, i)
    if (found !== undefined) return found
  }
  return undefined
}
