// W3C Trace Context (https://www.w3.org/TR/trace-context/), as the OpenTelemetry SDK's
// W3CTraceContextPropagator reads and writes it: traceparent in (version 00, or a later
// version's first four fields), tracestate carried on, cleaned of invalid members, and both
// sent on to the chain nodes. Go's propagation: no baggage.

/** The caller's span, from its traceparent (and tracestate). */
export interface TraceParent {
  /** 32 lower-case hex digits, not all zero. */
  readonly traceId: string
  /** 16 lower-case hex digits, not all zero. */
  readonly spanId: string
  /** The caller sampled it (trace-flags bit 0). */
  readonly sampled: boolean
  /** The caller's tracestate, its valid members only, in its order; '' when it sent none. */
  readonly traceState: string
}

// The SDK's own pattern: a version other than ff, ids not all zero, and after version 00 nothing more.
const TRACEPARENT = /^\s?((?!ff)[\da-f]{2})-((?![0]{32})[\da-f]{32})-((?![0]{16})[\da-f]{16})-([\da-f]{2})(-.*)?\s?$/

/** The caller's span that `headers` name (Node lower-cases them; of a repeated traceparent the first counts), or undefined. */
export function extractTraceParent (headers: Readonly<Record<string, string | string[] | undefined>>): TraceParent | undefined {
  const header = headers.traceparent
  if (header === undefined) return undefined
  const text = Array.isArray(header) ? header[0] : header
  if (text === undefined) return undefined
  const match = TRACEPARENT.exec(text)
  if (match === null || (match[1] === '00' && match[5] !== undefined)) return undefined
  const state = headers.tracestate
  return {
    traceId: match[2] as string,
    spanId: match[3] as string,
    sampled: (parseInt(match[4] as string, 16) & 1) === 1,
    traceState: state === undefined ? '' : cleanTraceState(Array.isArray(state) ? state.join(',') : state)
  }
}

/** The traceparent of span `spanId` in trace `traceId`. */
export function traceparentOf (traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`
}

const MAX_MEMBERS = 32
const MAX_LENGTH = 512
const KEY = /^(?:[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})$/
const VALUE = /^[ -~]{0,255}[!-~]$/

/**
 * A tracestate header's valid list members, in its order, at most 32 and 512 characters (the
 * SDK's TraceState: a member whose key or value is invalid is left out, a later duplicate key
 * wins over an earlier one in the earlier one's place).
 */
export function cleanTraceState (header: string): string {
  const members = new Map<string, string>()
  let length = 0
  for (const member of header.split(',')) {
    const text = member.trim()
    const at = text.indexOf('=')
    if (at < 0) continue
    const key = text.slice(0, at)
    const value = text.slice(at + 1)
    if (!KEY.test(key) || !VALUE.test(value) || value.includes(',') || value.includes('=')) continue
    const next = length + text.length + (members.size > 0 ? 1 : 0)
    if (next > MAX_LENGTH) continue
    members.set(key, value)
    length = next
    if (members.size >= MAX_MEMBERS) break
  }
  let state = ''
  for (const [key, value] of members) state += `${state === '' ? '' : ','}${key}=${value}`
  return state
}
