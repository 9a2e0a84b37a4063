import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire'
import type { SpanContext } from './span-records.js'

// The fields of an OTLP ExportTraceServiceRequest (opentelemetry/proto/collector/trace/v1/
// trace_service.proto and trace/v1/trace.proto) and how each is written with @bufbuild/protobuf's
// BinaryWriter: the tags, attributes, ids, times, name, kind and status. otlp-serializer.ts
// puts them together.

/** A field's tag, as the varint BinaryWriter.uint32 writes: one byte for fields 1 to 15. */
const tag = (field: number, wireType: WireType): number => (field << 3) | wireType

// Field tags, by message.
export const REQUEST_RESOURCE_SPANS = tag(1, WireType.LengthDelimited)
export const RESOURCE_SPANS_RESOURCE = tag(1, WireType.LengthDelimited)
export const RESOURCE_SPANS_SCOPE_SPANS = tag(2, WireType.LengthDelimited)
export const RESOURCE_ATTRIBUTES = tag(1, WireType.LengthDelimited)
export const SCOPE_SPANS_SCOPE = tag(1, WireType.LengthDelimited)
export const SCOPE_SPANS_SPANS = tag(2, WireType.LengthDelimited)
export const SCOPE_NAME = tag(1, WireType.LengthDelimited)
export const SCOPE_VERSION = tag(2, WireType.LengthDelimited)
const SPAN_TRACE_ID = tag(1, WireType.LengthDelimited)
const SPAN_SPAN_ID = tag(2, WireType.LengthDelimited)
const SPAN_TRACE_STATE = tag(3, WireType.LengthDelimited)
const SPAN_PARENT_SPAN_ID = tag(4, WireType.LengthDelimited)
const SPAN_NAME = tag(5, WireType.LengthDelimited)
const SPAN_KIND = tag(6, WireType.Varint)
const SPAN_START = tag(7, WireType.Bit64)
const SPAN_END = tag(8, WireType.Bit64)
const SPAN_ATTRIBUTES = tag(9, WireType.LengthDelimited)
const SPAN_STATUS = tag(15, WireType.LengthDelimited)
export const SPAN_FLAGS = tag(16, WireType.Bit32)
const STATUS_CODE = tag(3, WireType.Varint)
const KEY_VALUE_KEY = tag(1, WireType.LengthDelimited)
const KEY_VALUE_VALUE = tag(2, WireType.LengthDelimited)
const ANY_STRING = tag(1, WireType.LengthDelimited)
const ANY_BOOL = tag(2, WireType.Varint)
const ANY_INT = tag(3, WireType.Varint)

export const KIND_SERVER = 2
export const KIND_CLIENT = 3
const STATUS_ERROR = 2
/** Span.flags: the W3C trace flags (sampled), and whether the parent is remote (HAS_IS_REMOTE, IS_REMOTE). */
export const FLAGS_LOCAL_PARENT = 0x01 | 0x100
export const FLAGS_REMOTE_PARENT = 0x01 | 0x100 | 0x200

/** The bytes of fields written ahead of time with `build` (keys, constant attributes, blocks, the resource, the scopes). */
export function encoded (build: (w: BinaryWriter) => void): Uint8Array {
  const w = new BinaryWriter()
  build(w)
  return w.finish()
}

/** A KeyValue's key field, ahead of its value. */
export function keyField (key: string): Uint8Array {
  return encoded((w) => w.uint32(KEY_VALUE_KEY).string(key))
}

/** A whole attribute of a string value, its field's tag included (a span's attributes, or the resource's). */
export function stringAttribute (w: BinaryWriter, key: Uint8Array, value: string, field = SPAN_ATTRIBUTES): void {
  w.uint32(field).fork().raw(key).uint32(KEY_VALUE_VALUE).fork().uint32(ANY_STRING).string(value).join().join()
}

/** A whole attribute of a small non-negative integer value (a status code, a node, an attempt). */
export function intAttribute (w: BinaryWriter, key: Uint8Array, value: number): void {
  w.uint32(SPAN_ATTRIBUTES).fork().raw(key).uint32(KEY_VALUE_VALUE).fork().uint32(ANY_INT).uint32(value).join().join()
}

export const boolAttribute = (key: Uint8Array): Uint8Array => encoded((w) =>
  w.uint32(SPAN_ATTRIBUTES).fork().raw(key).uint32(KEY_VALUE_VALUE).fork().uint32(ANY_BOOL).bool(true).join().join())

/** Each hex digit's value, by its character code (ids are validated or made as lower-case hex). */
const NIBBLE = new Uint8Array(128)
for (let i = 0; i < 16; i++) NIBBLE['0123456789abcdef'.charCodeAt(i)] = i

/** An id's field: the bytes its lower-case hex digits spell. */
function idField (w: BinaryWriter, field: number, digits: string): void {
  const bytes = new Uint8Array(digits.length >> 1)
  for (let i = 0; i < bytes.length; i++) bytes[i] = (NIBBLE[digits.charCodeAt(2 * i)] as number) << 4 | (NIBBLE[digits.charCodeAt(2 * i + 1)] as number)
  w.uint32(field).bytes(bytes)
}

const TWO_20 = 2 ** 20
const TWO_32 = 2 ** 32

/**
 * A time field: the wall-clock nanoseconds of `ms` (a performance.now() time of the span's
 * request), read as its context's wall clock (Date.now() when the request's trace began) plus
 * the monotonic time since. Written as the fixed64's two little-endian 32-bit halves, computed
 * exactly in doubles: the epoch's milliseconds split at 2^20, each part times 10^6 below 2^53.
 */
export function timeField (w: BinaryWriter, field: number, context: SpanContext, ms: number): void {
  const wallMs = context.wallClockMs
  const upper = Math.floor(wallMs / TWO_20)
  // (upper × 2^20) ms in ns is (upper × 10^6) × 2^20: its bits above 32 are hi, the rest start lo.
  const upperNs = upper * 1e6
  let hi = Math.floor(upperNs / 2 ** 12)
  let lo = (upperNs - hi * 2 ** 12) * TWO_20 + (wallMs - upper * TWO_20) * 1e6 + Math.round((ms - context.monotonicMs) * 1e6)
  const carry = Math.floor(lo / TWO_32)
  hi += carry
  lo -= carry * TWO_32
  w.uint32(field).fixed32(lo).fixed32(hi)
}

/**
 * The fields that differ from span to span, as every span has them: its trace, its id, the
 * trace's tracestate, its parent ('' for a root) and its times.
 */
export function spanIdsAndTimes (w: BinaryWriter, spanId: string, parentSpanId: string,
  times: { readonly startMs: number, readonly endMs: number }, context: SpanContext): void {
  idField(w, SPAN_TRACE_ID, context.traceId)
  idField(w, SPAN_SPAN_ID, spanId)
  if (context.traceState !== '') w.uint32(SPAN_TRACE_STATE).string(context.traceState)
  if (parentSpanId !== '') idField(w, SPAN_PARENT_SPAN_ID, parentSpanId)
  timeField(w, SPAN_START, context, times.startMs)
  timeField(w, SPAN_END, context, times.endMs)
}

export function errorStatus (w: BinaryWriter): void {
  w.uint32(SPAN_STATUS).fork().uint32(STATUS_CODE).uint32(STATUS_ERROR).join()
}

/** A span's name (Span.name) and kind. */
export function nameAndKind (w: BinaryWriter, name: string, kind: number): void {
  w.uint32(SPAN_NAME).string(name).uint32(SPAN_KIND).uint32(kind)
}
