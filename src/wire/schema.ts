import { Type, type TInteger, type TNull, type TSchema, type TUnion, type TUnsafe } from 'typebox'

// What every JSON dialect here shares (encoding-json.ts: Go's encoding/json of gogoproto
// structs; proto-to-api-json.ts: the Go edge-api's protoToAPIJSON): a JSON value, exact
// 64-bit integers, and the schema pieces both describe their output with.

/** A JSON value as the serializer writes it: bigint for integers beyond 2^53. */
export type Json = null | boolean | number | bigint | string | Json[] | { [key: string]: Json }

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

/**
 * A value that may be JSON null (an unset message, an empty []byte). Emitted as OpenAPI's
 * `nullable` rather than anyOf, because the serializer validates anyOf branches with Ajv,
 * which cannot see a bigint as an integer.
 */
export function Nullable<T extends TSchema> (schema: T): TUnion<[T, TNull]> {
  return { ...schema, nullable: true } as never
}

/** An integer as the serializer writes it exactly: a number while it is safe, a bigint beyond 2^53. */
export function exactInteger (n: bigint): Int64Value {
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n
}

/** Reads a protojson 64-bit integer (a decimal string, or a number) exactly; undefined when it is neither. */
export function readInt64 (value: unknown): Int64Value | undefined {
  if (typeof value === 'number') return value
  if (typeof value !== 'string' || !/^-?\d{1,20}$/.test(value)) return undefined
  return exactInteger(BigInt(value))
}

/** Reads a protojson 64-bit integer exactly, 0 when absent or unreadable (Go's zero value). */
export function int64 (value: unknown): Int64Value {
  return readInt64(value) ?? 0
}

/** Where a schema says which chain message it serves (test/wire/chain-version.test.ts compares the two). */
export const CHAIN_MESSAGE_KEY = 'x-chain-message'

/** Schema options naming the chain's protobuf message a schema serves, by its full name. */
export function chainMessage (fullName: string): { [CHAIN_MESSAGE_KEY]: string } {
  return { [CHAIN_MESSAGE_KEY]: fullName }
}
