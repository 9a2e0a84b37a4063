import { Type, type Static, type TSchema, type TInteger, type TObject, type TProperties, type TUnsafe } from 'typebox'

// The chain's REST gateway speaks protojson: 64-bit integers as strings, enums as names.
// Clients of the Go service got Go's encoding/json of the same messages instead: 64-bit
// integers as JSON numbers, enums as numbers, and (gogoproto `omitempty`) zero values left
// out. One TypeBox schema per message drives the conversion here, the response serializer
// (which writes bigint exactly) and the OpenAPI document, so the three cannot disagree.

const ENUM_KEY = 'x-proto-enum'

/** A 64-bit integer: a number, or a bigint beyond 2^53 (the serializer writes both exactly). */
export type Int64Value = number | bigint

/** A signed 64-bit integer field. */
export const Int64 = (options: { description?: string } = {}): TUnsafe<Int64Value> =>
  Type.Unsafe<Int64Value>({ type: 'integer', format: 'int64', ...options })
/** An unsigned 64-bit integer field. */
export const Uint64 = (options: { description?: string } = {}): TUnsafe<Int64Value> =>
  Type.Unsafe<Int64Value>({ type: 'integer', format: 'uint64', minimum: 0, ...options })
/** A 32-bit integer field (the gateway already sends it as a JSON number). */
export const Int32 = (options: { description?: string } = {}): TInteger => Type.Integer({ format: 'int32', ...options })

/** A protobuf enum, emitted as its number. `values` maps the gateway's names to numbers. */
export function ProtoEnum (values: Readonly<Record<string, number>>): TInteger {
  const doc = Object.entries(values).map(([name, n]) => `${n}=${name}`).join(', ')
  return Type.Integer({ format: 'int32', description: `enum: ${doc}`, [ENUM_KEY]: values })
}

/** A message as Go's encoding/json wrote it with omitempty: every field optional. */
export function ProtoMessage<T extends TProperties> (properties: T): TObject<{ [K in keyof T]: ReturnType<typeof Type.Optional<T[K]>> }> {
  const optional = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)]))
  return Type.Object(optional) as never
}

/** A nested value kept exactly as the gateway's protojson (block headers, proof ops). */
export function ProtoJsonObject (description: string): TObject<{}> {
  return Type.Object({}, { additionalProperties: true, description })
}

export interface ConvertOptions {
  /** Leave out zero and unset values (0, "", false, [], null) as Go's omitempty did. @default true */
  readonly omitEmpty?: boolean
}

type Json = null | boolean | number | bigint | string | Json[] | { [key: string]: Json }

/**
 * Converts a protojson value to the legacy shape that `schema` describes: integer fields
 * become numbers (bigint beyond 2^53, so 64-bit values stay exact), enum names become
 * their numbers, fields the schema does not list are dropped. Never mutates its input.
 * Typed by the schema, so the value and the response schema cannot drift apart; undefined
 * when the value is absent, null, or not of the schema's shape.
 */
export function fromProtoJson<T extends TSchema> (schema: T, value: unknown, options: ConvertOptions = {}): Static<T> | undefined {
  return (convert(schema as Schema, value, options.omitEmpty ?? true) ?? undefined) as Static<T> | undefined
}

interface Schema {
  type?: string
  properties?: Record<string, Schema>
  items?: Schema
  anyOf?: Schema[]
  [ENUM_KEY]?: Record<string, number>
}

function convert (schema: Schema, value: unknown, omitEmpty: boolean): Json | undefined {
  if (value === undefined) return undefined
  if (value === null) return null
  if (schema.anyOf !== undefined) {
    const concrete = schema.anyOf.find((s) => s.type !== 'null') as Schema
    return convert(concrete, value, omitEmpty)
  }
  switch (schema.type) {
    case 'integer': return integer(schema, value)
    case 'array': {
      if (!Array.isArray(value)) return undefined
      const items = schema.items as Schema
      return value.map((item) => convert(items, item, omitEmpty) ?? null)
    }
    case 'object': {
      const properties = Object.entries(schema.properties ?? {})
      if (properties.length === 0) return value as Json
      if (typeof value !== 'object' || Array.isArray(value)) return undefined
      const out: Record<string, Json> = {}
      for (const [key, fieldSchema] of properties) {
        const field = convert(fieldSchema, (value as Record<string, unknown>)[key], omitEmpty)
        if (field === undefined || (omitEmpty && isEmpty(field))) continue
        out[key] = field
      }
      return out
    }
    default: return value as Json
  }
}

function integer (schema: Schema, value: unknown): Int64Value | undefined {
  if (typeof value === 'number') return value
  if (typeof value !== 'string') return undefined
  const names = schema[ENUM_KEY]
  if (names !== undefined && Object.hasOwn(names, value)) return names[value]
  if (!/^-?\d{1,20}$/.test(value)) return undefined
  return exactInteger(BigInt(value))
}

/** An integer as the serializer writes it exactly: a number while it is safe, a bigint beyond 2^53. */
export function exactInteger (n: bigint): Int64Value {
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n
}

// Go's omitempty: zero numbers, "", false, empty slices, and nil pointers (protojson's null
// for an unset message or bytes field).
function isEmpty (value: Json): boolean {
  return value === null || value === 0 || value === 0n || value === '' || value === false || (Array.isArray(value) && value.length === 0)
}

/** Reads a protojson 64-bit integer (a decimal string) as an exact number or bigint. */
export function int64 (value: unknown): Int64Value {
  return integer({}, value) ?? 0
}
