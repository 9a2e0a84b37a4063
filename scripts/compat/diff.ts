// A line diff of two canonical documents, like the Go compatibility test's jsonDiff
// (zpoken/gonka common/queryapi/tests/compatibility/compatibility_test.go@89ff8bdb): only
// changed lines, "- " from the first server and "+ " from the second.

/** Above this many cells the LCS table is not built; the changed region is shown whole. */
const MAX_CELLS = 4_000_000

export function lineDiff (a: readonly string[], b: readonly string[]): string[] {
  // Answers mostly differ in a few places: drop the common head and tail first.
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let endA = a.length
  let endB = b.length
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--
    endB--
  }
  const x = a.slice(start, endA)
  const y = b.slice(start, endB)
  if (x.length * y.length > MAX_CELLS) return [...x.map((l) => `- ${l}`), ...y.map((l) => `+ ${l}`)]
  // lcs[i][j]: the longest common subsequence of x[i..] and y[j..].
  const lcs = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1))
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!)
    }
  }
  const out: string[] = []
  let i = 0
  let j = 0
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      i++
      j++
    } else if (i < x.length && (j === y.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      out.push(`- ${x[i++]!}`)
    } else {
      out.push(`+ ${y[j++]!}`)
    }
  }
  return out
}
