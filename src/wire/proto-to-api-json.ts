import { Type, type TInteger, type TNull, type TObject, type TObjectOptions, type TOptional, type TProperties, type Static, type TSchema, type TString, type TUnion, type TUnsafe } from 'typebox'
import { int64, type Json } from './schema.js'

// The newest Go edge-api's protoToAPIJSON (zpoken/gonka common/queryapi/protojson.go@ef1a5efd):
// the protojson the chain gateway also speaks (cosmos codec.ProtoMarshalJSON: OrigName,
// EmitDefaults), with int32/int64/uint32/uint64 fields rewritten as JSON numbers. So, unlike
// Go's encoding/json (encoding-json.ts):
// - enums stay names ("DKG_PHASE_COMPLETED"); a value the chain's enum lacks stays a number
//   (ApiNumberEnum instead writes the number, for the BLS enums real clients read as numbers);
// - every field is present: 0, "", false, [] for an empty list, null for an unset message
//   (a schema marked Nullable) or empty bytes (jsonpb hands a nil []byte to encoding/json,
//   which writes null);
// - fields the schema does not list are dropped, as Go drops what its compiled struct lacks.
// Used for BLS epoch_data and signing_request and for active_confirmation_poc_event.

const ENUM_KEY = 'x-api-enum'
const NUMBER_ENUM_KEY = 'x-api-number-enum'
const BYTES_KEY = 'x-api-bytes'
const IF_SENT_KEY = 'x-api-if-sent'

/** A protobuf enum written as its name; `names[0]` is the zero value. */
export function ApiEnum (names: readonly [string, ...string[]]): TUnsafe<string> {
  return Type.Unsafe<string>({ type: 'string', enum: [...names], description: `enum name; ${names[0]} when unset`, [ENUM_KEY]: true })
}

/**
 * A protobuf enum written as its number, as Go's encoding/json writes a gogoproto enum field;
 * `names[n]` is the gateway's name of value n. A name not listed (a newer chain's value) is 0,
 * the enum's "unset"; a number the gateway sends (a value its own enum lacks) stays itself.
 */
export function ApiNumberEnum (names: readonly [string, ...string[]]): TInteger {
  const doc = names.map((name, n) => `${n}=${name}`).join(', ')
  return Type.Integer({ format: 'int32', description: `enum number: ${doc}; 0 when unset`, [NUMBER_ENUM_KEY]: [...names] })
}

/** A protobuf bytes field: base64, null when empty. */
export function ApiBytes (description = 'base64'): TUnion<[TString, TNull]> {
  return { ...Type.String({ description: `${description}; null when empty` }), nullable: true, [BYTES_KEY]: true } as never
}

/**
 * A message whose full layout is not known here (PocStageRecipe: its model configs change
 * between chain versions): the listed fields are converted, any other field is passed on as
 * the gateway gives it, and missing fields are not filled in.
 */
export function ApiOpenMessage<T extends TProperties> (properties: T, description: string, options?: TObjectOptions): TObject<{ [K in keyof T]: TOptional<T[K]> }> {
  const optional = Object.fromEntries(Object.entries(properties).map(([key, schema]) => [key, Type.Optional(schema)]))
  return Type.Object(optional, { ...options, additionalProperties: true, description }) as never
}

/**
 * A field that only some chain versions have: written as the gateway sends it (null included)
 * when the gateway has the key, left out when it has none. Go compiled against a chain without
 * the field writes no key; compiled against one with it, protojson's value.
 */
export function ApiIfSent<T extends TSchema> (schema: T): ReturnType<typeof Type.Optional<T>> {
  return Type.Optional({ ...schema, [IF_SENT_KEY]: true } as T)
}

interface Schema {
  type?: string
  properties?: Record<string, Schema>
  additionalProperties?: boolean
  items?: Schema
  nullable?: boolean
  enum?: string[]
  [ENUM_KEY]?: boolean
  [NUMBER_ENUM_KEY]?: string[]
  [BYTES_KEY]?: boolean
  [IF_SENT_KEY]?: boolean
}

/** Converts a gateway protojson message to the shape `schema` describes, as protoToAPIJSON writes it. */
export function toApiJson<T extends TSchema> (schema: T, value: unknown): Static<T> {
  // convert() writes exactly what the schema describes, so its result is the schema's type.
  return convert(schema as Schema, value) as Static<T>
}

function convert (schema: Schema, value: unknown): Json {
  if (value === undefined || value === null) return zero(schema)
  switch (schema.type) {
    case 'integer': {
      const names = schema[NUMBER_ENUM_KEY]
      if (names !== undefined && typeof value === 'string') return Math.max(names.indexOf(value), 0)
      return typeof value === 'number' || typeof value === 'string' ? int64(value) : 0
    }
    case 'number': return typeof value === 'number' ? value : 0
    case 'boolean': return value === true
    case 'string':
      // An enum value the chain's enum lacks arrives as its number and stays one.
      if (schema[ENUM_KEY] === true && typeof value === 'number') return value
      return typeof value === 'string' && !(value === '' && schema[BYTES_KEY] === true) ? value : zero(schema)
    case 'array': {
      const items = schema.items as Schema
      return Array.isArray(value) ? value.map((item) => (item === null ? null : convert(items, item))) : []
    }
    default: return object(schema, value)
  }
}

function object (schema: Schema, value: unknown): Json {
  if (typeof value !== 'object' || Array.isArray(value)) return zero(schema)
  const input = value as Record<string, unknown>
  const open = schema.additionalProperties === true
  const out: Record<string, Json> = open ? { ...input as Record<string, Json> } : {}
  for (const [key, field] of Object.entries(schema.properties as Record<string, Schema>)) {
    if ((open || field[IF_SENT_KEY] === true) && !(key in input)) continue
    out[key] = convert(field, input[key])
  }
  return out
}

/** The value EmitDefaults writes for an unset field. */
function zero (schema: Schema): Json {
  if (schema[BYTES_KEY] === true || schema.nullable === true) return null
  switch (schema.type) {
    case 'integer':
    case 'number': return 0
    case 'boolean': return false
    case 'string': return schema.enum?.[0] ?? ''
    case 'array': return []
    // A message embedded by value (gogoproto nullable=false) is all defaults, never null.
    default: return object(schema, {})
  }
}
