/** Median of a non-empty list (mean of the two middle values for an even count). */
export function median (values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  if (sorted.length === 0) return Number.NaN
  return sorted.length % 2 === 1 ? sorted[mid] as number : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** Nearest-rank percentile (0 < p ≤ 100) of an already sorted list. */
export function percentile (sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank] as number
}

export function round (value: number, digits = 2): number {
  const f = 10 ** digits
  return Math.round(value * f) / f
}

export function ms (value: number): string {
  return Number.isFinite(value) ? `${round(value, 2)} ms` : 'n/a'
}

export function ratio (value: number): string {
  return Number.isFinite(value) ? `${round(value, 3)}×` : 'n/a'
}
