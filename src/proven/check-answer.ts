import { keyId } from './store-keys.js'
import type { ProvenRoute, ProvenValues, RouteRequest } from './proven-routes.js'

// Whether an answer edge-api built from the gateway's REST reads says what the proven store
// values say (docs/verified-reads.md, "Proven answers"). Both sides are put in one canonical
// form first, so that a difference is one of meaning, not of spelling: integers (numbers,
// bigints, decimal strings) as decimal strings, and empty values (0, "", false, null, [],
// {}) left out, as proto3 and Go's omitempty treat them. The first difference is named.

export type CheckResult =
  /** The answer is what the proofs say; `keys`: how many store values it was checked against. */
  | { readonly verdict: 'verified', readonly keys: number }
  /** The answer says something the proofs do not (the node lied on its unproven read, or edge-api derives it differently): never served as verified. */
  | { readonly verdict: 'mismatch', readonly detail: string }

/** Compares `answer` (the route's answer at `request.height`) with the values `proven` for it; every key the route needs must be in `proven`. */
export function checkAnswer (route: ProvenRoute, answer: Record<string, any>, proven: ProvenValues, request: RouteRequest): CheckResult {
  const keys = route.keys(request, proven)
  const missing = keys.filter((key) => !proven.has(keyId(key))).length
  if (missing > 0) return { verdict: 'mismatch', detail: `${missing} of the ${keys.length} store values the answer derives from are not proven` }
  let expected: Canonical
  try {
    expected = canonical(route.expected(request, proven))
  } catch (err) {
    // A proven value edge-api cannot read: the chain's layout is not the one this build knows.
    return { verdict: 'mismatch', detail: `a proven value does not decode: ${(err as Error).message}` }
  }
  const difference = firstDifference(expected, canonical(route.answered(answer)), '')
  return difference === undefined ? { verdict: 'verified', keys: keys.length } : { verdict: 'mismatch', detail: difference }
}

type Canonical = string | Canonical[] | { [key: string]: Canonical } | undefined

/** The canonical form: integers as decimal strings, empty values left out (undefined). */
export function canonical (value: unknown): Canonical {
  if (value === undefined || value === null || value === false || value === '') return undefined
  if (typeof value === 'bigint' || typeof value === 'number') return value === 0 || value === 0n ? undefined : String(value)
  if (typeof value === 'string') return /^-?\d+$/.test(value) ? canonical(BigInt(value)) : value
  if (value === true) return 'true'
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map(canonical)
  const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, canonical(v)] as const).filter(([, v]) => v !== undefined)
  return entries.length === 0 ? undefined : Object.fromEntries(entries.sort(([a], [b]) => a < b ? -1 : 1))
}

/** The first place `expected` and `actual` differ, as "path: the answer has …, the proofs say …"; undefined when equal. */
function firstDifference (expected: Canonical, actual: Canonical, path: string): string | undefined {
  if (typeof expected === 'object' && typeof actual === 'object' && Array.isArray(expected) === Array.isArray(actual)) {
    const keys = Array.isArray(expected) ? [...Array(Math.max(expected.length, (actual as Canonical[]).length)).keys()].map(String) : [...new Set([...Object.keys(expected), ...Object.keys(actual)])]
    for (const key of keys) {
      const difference = firstDifference((expected as Record<string, Canonical>)[key], (actual as Record<string, Canonical>)[key], `${path}/${key}`)
      if (difference !== undefined) return difference
    }
    return undefined
  }
  if (expected === actual) return undefined
  return `${path === '' ? '/' : path}: the answer has ${JSON.stringify(actual) ?? 'nothing'}, the proofs say ${JSON.stringify(expected) ?? 'nothing'}`
}
