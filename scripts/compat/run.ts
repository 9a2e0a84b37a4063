import { canonicalLines, keyPaths, parseJson, type Json } from './json.js'
import { lineDiff } from './diff.js'
import { fieldName, KNOWN_DIFFERENCES, reconcile, REQUEST_TIMES } from './known-differences.js'
import { discoverParams, routesFor, type ExtraParams, type Get, type Route } from './routes.js'

// Calls every route on two servers and compares them, as the Go project's compatibility test
// does (zpoken/gonka common/queryapi/tests/compatibility/compatibility_test.go@89ff8bdb):
// statuses must be equal; when both are errors they are compatible; successful bodies are
// compared after sorting keys. Stricter than Go's test, which accepted any two bodies with the
// same top-level keys: here the whole body must match (versions: its key paths). A body that
// differs is fetched again from both, in case the chain moved between the two calls (Go's test
// retried /v1/participants while the block heights differed). edge-api's deliberate differences
// from the newest Go (known-differences.ts, docs/clients.md) are reported, not counted.

export interface CompatOptions extends ExtraParams {
  /** Extra fetches of both servers when their bodies differ. @default 3 */
  readonly retries?: number
  /** Pause before each retry, in ms. @default 1000 */
  readonly retryDelayMs?: number
  /** Per-request timeout, in ms. @default 30000 */
  readonly timeoutMs?: number
  /** Route paths (without query) to leave out. */
  readonly skip?: readonly string[]
}

export interface RouteResult {
  readonly path: string
  readonly ok: boolean
  /** One line: the statuses, or why the route is not comparable. */
  readonly summary: string
  /** Diff lines ("- " first server, "+ " second) when the bodies differ. */
  readonly diff: readonly string[]
  /** The known differences found in the answer (docs/clients.md), by field. */
  readonly known: readonly string[]
}

export interface CompatReport {
  readonly results: readonly RouteResult[]
  readonly mismatches: number
}

interface Answer { status: number, body: string }

export function httpGet (base: string, timeoutMs: number): Get {
  const root = base.replace(/\/+$/, '')
  return async (path) => {
    const res = await fetch(root + path, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' })
    return { status: res.status, body: await res.text() }
  }
}

/** Compares every route of `first` (the reference, e.g. the running deployment) with `second`. */
export async function compareServers (first: string, second: string, options: CompatOptions = {}): Promise<CompatReport> {
  const timeoutMs = options.timeoutMs ?? 30_000
  const getA = httpGet(first, timeoutMs)
  const getB = httpGet(second, timeoutMs)
  const skip = new Set(options.skip ?? [])
  const routes = routesFor(await discoverParams(getA), options).filter((r) => !skip.has(r.path.split('?', 1)[0] as string))
  const results: RouteResult[] = []
  for (const route of routes) results.push(await compareRoute(route, getA, getB, options))
  return { results, mismatches: results.filter((r) => !r.ok).length }
}

async function compareRoute (route: Route, getA: Get, getB: Get, options: CompatOptions): Promise<RouteResult> {
  const retries = options.retries ?? 3
  let last: RouteResult | undefined
  for (let attempt = 0; attempt <= retries; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, options.retryDelayMs ?? 1000))
    last = await attemptRoute(route, getA, getB)
    if (last.ok) return last
  }
  return last as RouteResult
}

async function attemptRoute (route: Route, getA: Get, getB: Get): Promise<RouteResult> {
  const { path } = route
  const [a, b] = await Promise.allSettled([getA(path), getB(path)])
  if (a.status === 'rejected' || b.status === 'rejected') {
    const why = (r: PromiseSettledResult<Answer>): string => (r.status === 'rejected' ? describe(r.reason) : 'ok')
    return { path, ok: false, summary: `request failed: first ${why(a)}, second ${why(b)}`, diff: [], known: [] }
  }
  const [x, y] = [a.value, b.value]
  if (x.status !== y.status) {
    return { path, ok: false, summary: `status ${x.status} vs ${y.status}`, diff: lineDiff(lines(parse(x.body), 'body'), lines(parse(y.body), 'body')), known: [] }
  }
  // Both failed the same way: compatible, as in Go's test (error texts are not compared).
  if (x.status < 200 || x.status > 299) return { path, ok: true, summary: `${x.status} (both)`, diff: [], known: [] }
  const [first, second] = [parse(x.body), parse(y.body)]
  let known: string[] = []
  if ('json' in first && 'json' in second) {
    reconcile(path, first.json, second.json, REQUEST_TIMES)
    known = reconcile(path, first.json, second.json)
  }
  const diff = lineDiff(lines(first, route.compare), lines(second, route.compare))
  const summary = (route.compare === 'keys' ? `${x.status} (key paths)` : String(x.status)) + (known.length > 0 ? ` (known differences: ${known.join(', ')})` : '')
  return { path, ok: diff.length === 0, summary, diff, known }
}

type Body = { json: Json } | { text: string }

/** A body parsed, or kept as text when it is not JSON. */
function parse (body: string): Body {
  try {
    return { json: parseJson(body) }
  } catch {
    return { text: body }
  }
}

/** A body as canonical lines: JSON with sorted keys (or its key paths), else its raw lines. */
function lines (body: Body, compare: Route['compare']): string[] {
  if ('text' in body) return body.text.split('\n')
  return compare === 'keys' ? keyPaths(body.json) : canonicalLines(body.json)
}

function describe (err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } }).cause
  const code = typeof cause?.code === 'string' ? ` (${cause.code})` : ''
  return `${(err as Error).message}${code}`
}

/** The report as text: one line per route, the diff under each that differs, and a summary. */
export function formatReport (report: CompatReport, first: string, second: string, maxDiffLines = 80): string {
  const out: string[] = [`compat: ${first} (-) vs ${second} (+)`]
  for (const r of report.results) {
    out.push(`${r.ok ? 'ok  ' : 'DIFF'}  ${r.path}  ${r.summary}`)
    for (const line of r.diff.slice(0, maxDiffLines)) out.push(`      ${line}`)
    if (r.diff.length > maxDiffLines) out.push(`      … ${r.diff.length - maxDiffLines} more lines`)
  }
  const found = new Set(report.results.flatMap((r) => r.known))
  const known = KNOWN_DIFFERENCES.map(fieldName).filter((name) => found.has(name))
  if (known.length > 0) out.push(`compat: known differences, not failures (docs/clients.md): ${known.join(', ')}`)
  out.push(`compat: ${report.results.length} routes, ${report.results.length - report.mismatches} equal, ${report.mismatches} different`)
  return `${out.join('\n')}\n`
}
