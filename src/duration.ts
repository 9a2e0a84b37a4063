// Durations in Go's time.ParseDuration syntax ("250ms", "5s", "1m30s", "0"), so an
// operator's existing config.env for the Go edge-api keeps working unchanged.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000
}

const TERM = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y

/** Parses a Go duration into milliseconds; returns undefined when malformed. */
export function parseDuration (text: string): number | undefined {
  let rest = text
  let sign = 1
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1
    rest = rest.slice(1)
  }
  // Go accepts a bare "0" and nothing else without a unit.
  if (rest === '0') return 0
  if (rest === '') return undefined
  let total = 0
  TERM.lastIndex = 0
  while (TERM.lastIndex < rest.length) {
    const match = TERM.exec(rest)
    if (match === null) return undefined
    total += Number(match[1]) * (UNIT_MS[match[2] as string] as number)
  }
  return sign * total
}

/** Formats milliseconds compactly, the way an operator writes them: 2m, 1m30s, 5s, 250ms. */
export function formatDuration (ms: number): string {
  if (ms === 0) return '0s'
  if (ms < 1000) return `${ms}ms`
  let rest = ms
  let out = ''
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    const n = Math.floor(rest / size)
    if (n > 0) out += `${n}${unit}`
    rest -= n * size
  }
  if (rest > 0) out += `${rest}ms`
  return out
}
