import { DKG_PHASES, SIGNING_STATUSES } from '../../src/routes/v1/bls.js'
import { canonicalLines, RawNumber, type Json } from './json.js'

// edge-api's deliberate differences from the newest Go edge-api (docs/clients.md says why and
// which client needs each). Comparing the two, each is reported as a known difference, not a
// failure: a value that differs exactly this way is taken as equal, anything else still counts.
// Both directions are accepted, so either server may be the Go one.

export interface KnownDifference {
  /** The routes it applies to (path and query). */
  readonly route: RegExp
  /** Where, from the root; "*" is every element of a list. */
  readonly path: readonly string[]
  /** Whether `a` and `b` (undefined: the key is absent) are this difference, in either order. */
  readonly matches: (a: Json | undefined, b: Json | undefined) => boolean
}

/** A number on one side, the enum's name for it on the other. */
const enumNumberOrName = (names: readonly string[]) => (a: Json | undefined, b: Json | undefined): boolean => {
  const pair = (n: Json | undefined, name: Json | undefined): boolean =>
    n instanceof RawNumber && /^\d+$/.test(n.text) && typeof name === 'string' && names[Number(n.text)] === name
  return pair(a, b) || pair(b, a)
}

/** [] on one side, null or no key at all on the other. */
const emptyListOrNone = (a: Json | undefined, b: Json | undefined): boolean => {
  const pair = (list: Json | undefined, none: Json | undefined): boolean => Array.isArray(list) && list.length === 0 && (none === undefined || none === null)
  return pair(a, b) || pair(b, a)
}

/** A string on one side, no key on the other: a field edge-api adds. */
const addedString = (a: Json | undefined, b: Json | undefined): boolean =>
  (typeof a === 'string' && b === undefined) || (a === undefined && typeof b === 'string')

const PARTICIPANTS = /^\/v1\/epochs\/[^/?]+\/participants$/

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  { route: /^\/v1\/bls\/epochs?\/[^/?]+$/, path: ['epoch_data', 'dkg_phase'], matches: enumNumberOrName(DKG_PHASES) },
  { route: /^\/v1\/bls\/signatures\/[^/?]+$/, path: ['signing_request', 'status'], matches: enumNumberOrName(SIGNING_STATUSES) },
  { route: PARTICIPANTS, path: ['active_participants', 'participants'], matches: emptyListOrNone },
  { route: PARTICIPANTS, path: ['active_participants', 'participants', '*', 'models'], matches: emptyListOrNone },
  { route: PARTICIPANTS, path: ['active_participants', 'participants', '*', 'ml_nodes'], matches: emptyListOrNone },
  { route: /^\/v1\/governance\/models$/, path: ['models'], matches: emptyListOrNone },
  { route: /^\/v1\/bridge\/addresses(?:\?|$)/, path: ['addresses'], matches: emptyListOrNone },
  { route: /^\/v1\/versions$/, path: ['api_version', 'build_time'], matches: addedString }
]

/** Two readings of a clock in unix seconds, taken up to `seconds` apart. */
const clockReadings = (seconds: number) => (a: Json | undefined, b: Json | undefined): boolean =>
  a instanceof RawNumber && b instanceof RawNumber && /^\d+$/.test(a.text) && /^\d+$/.test(b.text) && Math.abs(Number(a.text) - Number(b.text)) <= seconds

/**
 * Values that are the request's time on both servers (Go's and edge-api's alike): the two
 * requests of a comparison are sent a moment apart, so they straddle a second's boundary now
 * and then. Taken as equal when a few seconds apart, and not reported: they are no difference.
 */
export const REQUEST_TIMES: readonly KnownDifference[] = [
  { route: /^\/v1\/models$/, path: ['data', '*', 'created'], matches: clockReadings(5) }
]

/** A difference's name in reports: its path, lists as "[]". */
export function fieldName (difference: KnownDifference): string {
  return difference.path.join('.').replaceAll('.*', '[]')
}

const isObject = (v: Json | undefined): v is { [key: string]: Json } =>
  v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v) && !(v instanceof RawNumber)
const same = (a: Json | undefined, b: Json | undefined): boolean =>
  a === undefined || b === undefined ? a === b : canonicalLines(a).join('\n') === canonicalLines(b).join('\n')

/**
 * Takes every known difference between `reference` and `candidate` (answers of route `path`)
 * as equal by writing the reference's value into the candidate (which it changes); returns the
 * names of the differences found, each once.
 */
export function reconcile (path: string, reference: Json, candidate: Json, differences = KNOWN_DIFFERENCES): string[] {
  const found: string[] = []
  for (const difference of differences) {
    if (!difference.route.test(path)) continue
    let seen = false
    const visit = (a: Json | undefined, b: Json | undefined, keys: readonly string[]): void => {
      const [key, ...rest] = keys as [string, ...string[]]
      if (key === '*') {
        if (Array.isArray(a) && Array.isArray(b)) a.forEach((item, i) => { if (i < b.length) visit(item, b[i], rest) })
        return
      }
      if (!isObject(a) || !isObject(b)) return
      if (rest.length > 0) {
        visit(a[key], b[key], rest)
        return
      }
      const [x, y] = [Object.hasOwn(a, key) ? a[key] : undefined, Object.hasOwn(b, key) ? b[key] : undefined]
      if (same(x, y) || !difference.matches(x, y)) return
      seen = true
      if (x === undefined) delete b[key]
      else b[key] = x
    }
    visit(reference, candidate, difference.path)
    if (seen) found.push(fieldName(difference))
  }
  return found
}
