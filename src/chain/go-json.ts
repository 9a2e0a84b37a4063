import { int64, type Int64Value } from './proto-json.js'

// How Go's encoding/json writes the values the newest Go edge-api answers with
// (zpoken/gonka common/queryapi@ef1a5efd encodes CometBFT's native types and the
// gogoproto structs with encoding/json). Each helper takes the chain gateway's protojson
// (int64 as decimal strings, bytes as base64, timestamps as RFC 3339) and gives what Go
// writes for the same value.

/** A protojson bytes field (base64) decoded; empty for absent or non-string values. */
export function bytesOf (value: unknown): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.alloc(0)
}

/** cometbft libs/bytes.HexBytes.MarshalJSON: upper-case hex, "" when empty (never null). */
export function hexUpper (value: unknown): string {
  return bytesOf(value).toString('hex').toUpperCase()
}

/** A Go []byte: standard base64, null when empty (a nil slice after gogoproto decoding). */
export function base64OrNull (value: unknown): string | null {
  const bytes = bytesOf(value)
  return bytes.length === 0 ? null : bytes.toString('base64')
}

/** A protojson 64-bit integer as the exact number Go writes. */
export function goInt (value: unknown): Int64Value {
  return int64(value)
}

const TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/
const ZERO_TIME = '0001-01-01T00:00:00Z'

/**
 * time.Time.MarshalJSON (RFC3339Nano) of a protojson timestamp: UTC, the fraction without
 * trailing zeros. gogoproto decodes google.protobuf.Timestamp to UTC, so Go always writes
 * "Z". An absent or unreadable timestamp is Go's zero time.
 */
export function rfc3339Nano (value: unknown): string {
  const m = typeof value === 'string' ? TIMESTAMP.exec(value) : null
  if (m === null) return ZERO_TIME
  const [, seconds = '', fraction = '', zone = 'Z'] = m
  const nanos = fraction.replace(/0+$/, '')
  // The gateway writes UTC; an offset (another gateway) is moved to UTC at second precision.
  const utc = zone === 'Z' ? seconds : new Date(`${seconds}${zone}`).toISOString().slice(0, 19)
  return `${utc}${nanos === '' ? '' : `.${nanos}`}Z`
}

type Json = null | boolean | number | bigint | string | Json[] | { [key: string]: Json }

/**
 * Go's `omitempty` applied through a whole value, as encoding/json writes a gogoproto struct
 * whose every field is tagged omitempty: keys whose value is null, 0, "", false or an empty
 * list are left out. An empty object stays (a non-nil pointer to a zero struct is written
 * as {}), and list elements are never dropped.
 */
export function omitEmpty<T> (value: T): T {
  return strip(value as Json) as T
}

function strip (value: Json): Json {
  if (Array.isArray(value)) return value.map(strip)
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, Json> = {}
  for (const [key, field] of Object.entries(value)) {
    if (isEmpty(field)) continue
    out[key] = strip(field)
  }
  return out
}

function isEmpty (value: Json): boolean {
  return value === null || value === 0 || value === 0n || value === '' || value === false || (Array.isArray(value) && value.length === 0)
}
