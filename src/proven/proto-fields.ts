import { BinaryReader, WireType } from '@bufbuild/protobuf/wire'
import { NamedError } from '../named-error.js'

// A proven store value's protobuf, read field by field: the few messages a proven route
// compares (Epoch, EpochGroupData, Model, EpochParams, ConfirmationPoCEvent) need only their
// scalars, strings and nested messages, so one reader serves them all instead of a decoder
// per message. As gogoproto: a field absent is its zero value, the last of a repeated scalar
// wins, unknown fields are skipped, a known field with another wire type is an error.

/** A value that is not the protobuf its key holds. */
export class ProtoFieldError extends NamedError {}

export type Field = { readonly wireType: WireType.Varint, readonly varint: bigint } | { readonly wireType: WireType.LengthDelimited, readonly bytes: Uint8Array }

/** Every varint and length-delimited field of `bytes` by number, in order; fixed-width fields are skipped. */
export function readFields (bytes: Uint8Array): Map<number, Field[]> {
  const fields = new Map<number, Field[]>()
  const reader = new BinaryReader(bytes)
  try {
    while (reader.pos < reader.len) {
      const [number, wireType] = reader.tag()
      let field: Field | undefined
      if (wireType === WireType.Varint) field = { wireType, varint: BigInt(reader.uint64()) }
      else if (wireType === WireType.LengthDelimited) field = { wireType, bytes: reader.bytes() }
      else reader.skip(wireType, number)
      if (field !== undefined) fields.set(number, [...(fields.get(number) ?? []), field])
    }
  } catch (err) {
    throw new ProtoFieldError(`not protobuf: ${(err as Error).message}`)
  }
  return fields
}

function last (fields: Map<number, Field[]>, number: number, wireType: WireType): Field | undefined {
  const found = fields.get(number)?.at(-1)
  if (found !== undefined && found.wireType !== wireType) throw new ProtoFieldError(`field ${number}: wire type ${found.wireType}, expected ${wireType}`)
  return found
}

/** A uint64 field (0 when absent). */
export function uint64 (fields: Map<number, Field[]>, number: number): bigint {
  return (last(fields, number, WireType.Varint) as { varint: bigint } | undefined)?.varint ?? 0n
}

/** An int64 or int32 field, as the chain's signed value (0 when absent). */
export function int64 (fields: Map<number, Field[]>, number: number): bigint {
  return BigInt.asIntN(64, uint64(fields, number))
}

/** A string field ("" when absent). */
export function string (fields: Map<number, Field[]>, number: number): string {
  const found = last(fields, number, WireType.LengthDelimited) as { bytes: Uint8Array } | undefined
  return found === undefined ? '' : new TextDecoder().decode(found.bytes)
}

/** A repeated string field, in order. */
export function strings (fields: Map<number, Field[]>, number: number): string[] {
  return (fields.get(number) ?? []).map((field) => {
    if (field.wireType !== WireType.LengthDelimited) throw new ProtoFieldError(`field ${number}: wire type ${field.wireType}, expected ${WireType.LengthDelimited}`)
    return new TextDecoder().decode(field.bytes)
  })
}

/** A message field's own fields; undefined when absent (a nil pointer). */
export function message (fields: Map<number, Field[]>, number: number): Map<number, Field[]> | undefined {
  const found = last(fields, number, WireType.LengthDelimited) as { bytes: Uint8Array } | undefined
  return found === undefined ? undefined : readFields(found.bytes)
}
