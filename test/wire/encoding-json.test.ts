import t from 'tap'
import { Type } from 'typebox'
import { base64OrNull, bytesOf, fromProtoJson, hexUpper, omitEmpty, ProtoEnum, ProtoMessage, rfc3339Nano } from '../../src/wire/encoding-json.js'
import { Int32, Int64, Uint64 } from '../../src/wire/schema.js'

const Status = ProtoEnum({ UNSPECIFIED: 0, ACTIVE: 1, INACTIVE: 2 })
const Inner = ProtoMessage({ height: Int64(), note: Type.String() })
const Message = ProtoMessage({
  id: Type.String(),
  big: Uint64(),
  small: Int64(),
  count: Int32(),
  status: Status,
  flag: Type.Boolean(),
  tags: Type.Array(Type.String()),
  heights: Type.Array(Int64()),
  inner: Inner,
  list: Type.Array(Inner),
  raw: Type.Object({}, { additionalProperties: true, description: 'kept as protojson' }),
  maybe: Type.Union([Type.String(), Type.Null()])
})

t.test('64-bit strings become exact numbers, bigint beyond 2^53', async (t) => {
  const out = fromProtoJson(Message, {
    big: '18446744073709551615',
    small: '-9223372036854775808',
    heights: ['9007199254740991', '9007199254740992', '-42']
  }) as Record<string, unknown>
  t.equal(out.big, 18446744073709551615n)
  t.equal(out.small, -9223372036854775808n)
  t.same(out.heights, [9007199254740991, 9007199254740992n, -42])
  t.equal(typeof (out.heights as unknown[])[0], 'number', 'safe integers stay numbers')
})

t.test('enum names become numbers; numbers pass; unknown names and junk are left out', async (t) => {
  t.same(fromProtoJson(Message, { status: 'INACTIVE' }), { status: 2 })
  t.same(fromProtoJson(Message, { status: 'ACTIVE', count: 7 }), { status: 1, count: 7 })
  t.same(fromProtoJson(Message, { status: 'FROM_A_NEWER_CHAIN' }), {})
  t.same(fromProtoJson(Message, { small: '12abc', big: true, heights: 'x' }), {})
  t.same(fromProtoJson(Message, { inner: 'not an object', list: [{ height: '1' }, null] }), { list: [{ height: 1 }, null] },
    'a null array item stays: Go wrote a nil entry as null too')
})

t.test('omitempty: zero values are left out as Go did; fields the schema lacks are dropped', async (t) => {
  const input = { id: '', big: '0', small: '0', count: 0, status: 'UNSPECIFIED', flag: false, tags: [], inner: { height: '0', note: '' }, extra: 'dropped' }
  t.same(fromProtoJson(Message, input), { inner: {} })
  t.same(fromProtoJson(Message, { inner: null, maybe: null, id: 'x' }), { id: 'x' }, 'unset (null) messages are nil pointers: left out')
})

t.test('objects without listed properties, strings, booleans and nulls pass through untouched', async (t) => {
  const raw = { any: ['thing', 1] }
  const out = fromProtoJson(Message, { raw, id: 'x', flag: true }) as Record<string, unknown>
  t.equal(out.raw, raw)
  t.same(out, { id: 'x', flag: true, raw })
  t.same(fromProtoJson(Message, { maybe: 'y' }), { maybe: 'y' })
  t.equal(fromProtoJson(Type.Unsafe({ type: 'object' }), raw), raw, 'a bare object schema too')
})

t.test('never mutates its input', async (t) => {
  const input = { big: '5', inner: { height: '6' } }
  const copy = structuredClone(input)
  fromProtoJson(Message, input)
  t.same(input, copy)
})

t.test('schemas document themselves for OpenAPI', async (t) => {
  t.match(Status, { type: 'integer', description: 'enum: 0=UNSPECIFIED, 1=ACTIVE, 2=INACTIVE' })
  t.same(Message.required ?? [], [], 'every field of a message is optional')
})

t.test('bytes: HexBytes upper-case hex ("" when empty), []byte base64 (null when empty)', async (t) => {
  t.equal(hexUpper(Buffer.from('apphash').toString('base64')), '61707068617368')
  t.equal(hexUpper(Buffer.from([0xab, 0xcd]).toString('base64')), 'ABCD')
  t.equal(hexUpper(''), '')
  t.equal(hexUpper(null), '')
  t.equal(base64OrNull('AQI='), 'AQI=')
  t.equal(base64OrNull('AQI'), 'AQI=', 're-encoded padded, as Go writes it')
  t.equal(base64OrNull(''), null)
  t.equal(base64OrNull(undefined), null)
  t.equal(bytesOf(42).length, 0)
})

t.test('times are RFC3339Nano in UTC', async (t) => {
  t.equal(rfc3339Nano('2026-01-15T10:00:00.100000000Z'), '2026-01-15T10:00:00.1Z')
  t.equal(rfc3339Nano('0001-01-01T00:00:00Z'), '0001-01-01T00:00:00Z')
  t.equal(rfc3339Nano('2026-01-15T00:30:00+01:00'), '2026-01-14T23:30:00Z')
  t.equal(rfc3339Nano('2026-01-15 10:00:00Z'), '0001-01-01T00:00:00Z')
  t.equal(rfc3339Nano(null), '0001-01-01T00:00:00Z', 'unset: Go\'s zero time')
})

t.test('omitEmpty drops what Go\'s omitempty drops, and nothing else', async (t) => {
  const value = {
    zero: 0,
    bigZero: 0n,
    empty: '',
    no: false,
    none: null,
    list: [],
    kept: { inner: 0, deep: { x: 1 } },
    emptyObject: {},
    items: [0, '', false, null, { a: 0, b: 2 }],
    big: 9223372036854775807n,
    text: 'x'
  }
  t.same(omitEmpty(value), {
    kept: { deep: { x: 1 } },
    emptyObject: {},
    items: [0, '', false, null, { b: 2 }],
    big: 9223372036854775807n,
    text: 'x'
  })
  t.equal(value.zero, 0, 'the input is not changed')
})
