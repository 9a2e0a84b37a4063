import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire'
import t from 'tap'
import { int64, message, ProtoFieldError, readFields, string, strings, uint64 } from '../../src/proven/proto-fields.js'

const bytes = (write: (w: BinaryWriter) => void): Uint8Array => {
  const w = new BinaryWriter()
  write(w)
  return w.finish()
}

t.test('varints, strings, repeated strings and messages by field number; absent is zero', async (t) => {
  const f = readFields(bytes((w) => {
    w.tag(1, WireType.Varint).uint64(18446744073709551615n)
    w.tag(2, WireType.Varint).int64(-5n)
    w.tag(3, WireType.LengthDelimited).string('a')
    w.tag(3, WireType.LengthDelimited).string('b')
    w.tag(4, WireType.LengthDelimited).fork().tag(1, WireType.Varint).int32(7).join()
    w.tag(5, WireType.Bit64).fixed64(9) // a fixed-width field: skipped
    w.tag(6, WireType.Bit32).fixed32(9)
  }))
  t.equal(uint64(f, 1), 18446744073709551615n)
  t.equal(int64(f, 1), -1n, 'the same bits as an int64')
  t.equal(int64(f, 2), -5n)
  t.equal(string(f, 3), 'b', 'the last of a repeated scalar wins')
  t.same(strings(f, 3), ['a', 'b'])
  t.equal(uint64((message(f, 4) as Map<number, never>), 1), 7n)
  t.equal(message(f, 9), undefined, 'an absent message is nil')
  t.equal(uint64(f, 9), 0n)
  t.equal(string(f, 9), '')
  t.same(strings(f, 9), [])
  t.notOk(f.has(5) || f.has(6), 'fixed-width fields are not kept')
})

t.test('a known field with another wire type, or bytes that are not protobuf, are refused', async (t) => {
  const f = readFields(bytes((w) => { w.tag(1, WireType.Varint).uint64(1); w.tag(2, WireType.LengthDelimited).string('x') }))
  t.throws(() => string(f, 1), new ProtoFieldError('field 1: wire type 0, expected 2'))
  t.throws(() => strings(f, 1), ProtoFieldError)
  t.throws(() => uint64(f, 2), new ProtoFieldError('field 2: wire type 2, expected 0'))
  t.throws(() => readFields(Uint8Array.of(0x0a, 0x05, 0x01)), ProtoFieldError, 'a length past the end')
})
