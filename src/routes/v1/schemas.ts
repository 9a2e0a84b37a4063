import { Type, type TSchema } from 'typebox'
import { ProtoMessage } from '../../wire/encoding-json.js'
import { chainMessage, Int32, Int64 } from '../../wire/schema.js'

// The routes' shared schema pieces; Nullable is the wire's (src/wire/schema.ts).
export { Nullable } from '../../wire/schema.js'

/** The error envelope of every /v1 route. */
export const ErrorBody = Type.Object({ message: Type.String() })

/** Response schemas for the errors any chain-backed route can answer. */
export const CHAIN_ERRORS = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  429: ErrorBody,
  500: ErrorBody,
  502: ErrorBody,
  503: ErrorBody,
  504: ErrorBody
} as const

export function withChainErrors<T extends TSchema> (ok: T): typeof CHAIN_ERRORS & { 200: T } {
  return { 200: ok, ...CHAIN_ERRORS }
}

const UINT64_MAX = 18446744073709551615n

export const UINT64_RULE = 'must be a decimal unsigned 64-bit integer'

/**
 * A decimal unsigned 64-bit integer in a path, e.g. a BLS epoch id. Malformed values get
 * strconv.ParseUint's words (x-go-int, http/param-errors.ts); the route's preHandler checks the range, before any chain request.
 */
export const Uint64Param = Type.String({ pattern: '^[0-9]+$', description: UINT64_RULE, 'x-go-int': 'uint64' })

/** Decimal string known to match Uint64Param; false when it overflows 64 bits. */
export function fitsUint64 (decimal: string): boolean {
  return BigInt(decimal) <= UINT64_MAX
}

/** A bech32 account address (gonka1…): lower-case letters and digits only, at most 90. */
export const AddressParam = Type.String({
  pattern: '^[a-z0-9]{1,90}$',
  description: 'must be a bech32 address: lower-case letters and digits, at most 90 characters'
})

/** inference.inference.Decimal: value × 10^exponent (a threshold, a slot allocation). */
export const Decimal = ProtoMessage({ value: Int64(), exponent: Int32() }, chainMessage('inference.inference.Decimal'))
