import { Type, type Static, type TSchema, type TInteger, type TObject, type TObjectOptions, type TProperties } from 'typebox'
import { readInt64, type Int64Value, type Json } from './schema.js'

// Go's encoding/json, as the Go service wrote the chain's messages: the gogoproto structs
// (every field tagged omitempty) and CometBFT's native types. The chain's REST gateway speaks
// protojson instead: 64-bit integers as strings, enums as names, bytes as base64, times as
// RFC 3339. Here, from the gateway's protojson to what encoding/json wrote for the same
// value: 64-bit integers as JSON numbers, enums as numbers, zero values left out.
//
// For a message, one TypeBox schema drives the conversion (fromProtoJson), the response
// serializer (which writes bigint exactly) and the OpenAPI document, so the three cannot
// disagree. The value helpers below serve the types encoding/json writes its own way.

const ENUM_KEY = 'x-proto-enum'

/** A protobuf enum, emitted as its number. `values` maps the gateway's names to numbers. */
export function ProtoEnum (values: Readonly<Record<string, number>>): TInteger {
  const doc = Object.entries(values).map(([name, n]) => `${n}=${name}`).join(', ')
  return Type.Integer({ format: 'int32', description: `enum: ${doc}`, [ENUM_KEY]: values })
}

/** A message as Go's encoding/json wrote it with omitempty: every field optional. */
export function ProtoMessage<T extends TProperties> (properties: T, options?: TObjectOptions): TObject<{ [K in keyof T]: ReturnType<typeof Type.Optional<T[K]>> }> {
  const optional = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)]))
  return Type.Object(optional, options) as never
}

/**
 * Converts a protojson value to the legacy shape that `schema` describes: integer fields
 * become numbers (bigint beyond 2^53, so 64-bit values stay exact), enum names become
 * their numbers, zero values and fields the schema does not list are left out. Never
 * mutates its input. Typed by the schema, so the value and the response schema cannot
 * drift apart; undefined when the value is absent, null, or not of the schema's shape.
 */
export function fromProtoJson<T extends TSchema> (schema: T, value: unknown): Static<T> | undefined {
  return (convert(schema as Schema, value) ?? undefined) as Static<T> | undefined
}

interface Schema {
  type?: string
  properties?: Record<string, Schema>
  items?: Schema
  anyOf?: Schema[]
  [ENUM_KEY]?: Record<string, number>
}

function convert (schema: Schema, value: unknown): Json | undefined {
  if (value === undefined) return undefined
  if (value === null) return null
  if (schema.anyOf !== undefined) {
    const concrete = schema.anyOf.find((s) => s.type !== 'null') as Schema
    return convert(concrete, value)
  }
  switch (schema.type) {
    case 'integer': return integer(schema, value)
    case 'array': {
      if (!Array.isArray(value)) return undefined
      const items = schema.items as Schema
      return value.map((item) => convert(items, item) ?? null)
    }
    case 'object': {
      const properties = Object.entries(schema.properties ?? {})
      if (properties.length === 0) return value as Json
      if (typeof value !== 'object' || Array.isArray(value)) return undefined
      const out: Record<string, Json> = {}
      for (const [key, fieldSchema] of properties) {
        const field = convert(fieldSchema, (value as Record<string, unknown>)[key])
        if (field === undefined || isEmpty(field)) continue
        out[key] = field
      }
      return out
    }
    default: return value as Json
  }
}

function integer (schema: Schema, value: unknown): Int64Value | undefined {
  const names = schema[ENUM_KEY]
  if (names !== undefined && typeof value === 'string' && Object.hasOwn(names, value)) return names[value]
  return readInt64(value)
}

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

// What omitempty leaves out: zero numbers, "", false, empty slices, and nil pointers
// (protojson's null for an unset message or bytes field).
function isEmpty (value: Json): boolean {
  return value === null || value === 0 || value === 0n || value === '' || value === false || (Array.isArray(value) && value.length === 0)
}

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

const TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/

/** Go's zero time.Time, as encoding/json writes it. */
export const ZERO_TIME = '0001-01-01T00:00:00Z'

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
