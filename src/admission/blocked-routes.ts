import { REFUSALS } from './refusals.js'

// EDGE_API_BLOCKED_ROUTES: route prefixes below /v1 answered 403 before any work, as the Go
// deployment's front nginx does with GONKA_API_BLOCKED_ROUTES ("poc-batches training": a
// prefix matches the path's first segments, `chat` matches /chat, /chat/ and /chat/123). A
// `*` segment matches any one segment. The path is matched decoded, so an escaped character
// does not slip past. Admission's hook (admit.ts) asks it first, and answers the 403
// (refusals.ts); a browser's preflight is let through, so that the page's real request reads it.

export const BLOCKED_MESSAGE = REFUSALS.blockedRoute.message

/** Whether a /v1 path (its query ignored) starts with one of the prefixes. */
export function isBlocked (url: string, prefixes: ReadonlyArray<readonly string[]>): boolean {
  const path = url.split('?', 1)[0] as string
  if (!path.startsWith('/v1/')) return false
  let segments: string[]
  try {
    segments = path.slice(4).split('/').map(decodeURIComponent)
  } catch {
    return false
  }
  return prefixes.some((prefix) => prefix.length <= segments.length && prefix.every((segment, i) => segment === '*' || segment === segments[i]))
}
