import type { Load, LoadOptions, LoadResult } from './load.js'
import { median } from './stats.js'

export interface Contender {
  readonly label: string
  readonly options: LoadOptions
  /** Runs between this contender's warm-up and its measured run (e.g. reset counters). */
  readonly before?: () => Promise<void>
  /** Runs after its measured run; its value is kept next to the load result. */
  readonly after?: (result: LoadResult) => Promise<number>
}

export interface Measured {
  readonly runs: LoadResult[]
  readonly extra: number[]
}

/**
 * Runs each contender once per round, alternating who goes first (ABBA…), so drift on a
 * shared, noisy machine lands on both sides. Each run gets its own short warm-up.
 */
export async function alternate (load: Load, rounds: number, warmupS: number, contenders: readonly Contender[]): Promise<Map<string, Measured>> {
  const out = new Map<string, Measured>(contenders.map((c) => [c.label, { runs: [], extra: [] }]))
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? contenders : [...contenders].reverse()
    for (const c of order) {
      if (warmupS > 0) await load.run({ ...c.options, durationS: warmupS, amount: undefined })
      await c.before?.()
      const result = await load.run(c.options)
      const measured = out.get(c.label) as Measured
      measured.runs.push(result)
      if (c.after !== undefined) measured.extra.push(await c.after(result))
    }
  }
  return out
}

/** Median over rounds of one figure of the load results. */
export function med (measured: Measured | undefined, pick: (r: LoadResult) => number): number {
  return median((measured?.runs ?? []).map(pick))
}
