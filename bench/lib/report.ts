/** One line of the results table: what was measured, the figure, the goal and whether it was met. */
export interface Row {
  readonly item: string
  readonly what: string
  readonly value: string
  readonly goal: string
  /** null: informational, or the measurement could not run. */
  readonly met: boolean | null
}

export interface SuiteResult {
  readonly name: string
  readonly rows: Row[]
  /** Everything measured, for the JSON file. */
  readonly raw: unknown
  readonly seconds: number
}

export function table (suites: readonly SuiteResult[]): string {
  const lines = ['| # | measurement | result | goal | met |', '| --- | --- | --- | --- | --- |']
  for (const suite of suites) {
    for (const row of suite.rows) {
      const met = row.met === null ? '—' : row.met ? 'yes' : '**no**'
      lines.push(`| ${row.item} | ${row.what} | ${row.value} | ${row.goal} | ${met} |`)
    }
  }
  return lines.join('\n')
}
