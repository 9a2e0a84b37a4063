import { BinaryReader } from '@bufbuild/protobuf/wire'
import t from 'tap'
import { I64, LEN, ProtobufWriter, tag, VARINT } from '../../src/tracing/protobuf-writer.js'

// The writer against @bufbuild/protobuf's reader, an encoder written by others: what the
// serializer's test decodes whole, here field by field at the sizes where the wire format
// changes (a varint's 7-bit groups, a length past 127 bytes).

t.test('varints at each size the wire format changes, up to 2^53 - 1', async (t) => {
  const values = [0, 1, 127, 128, 16_383, 16_384, 2 ** 21 - 1, 2 ** 21, 2 ** 28, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER]
  const w = new ProtobufWriter(4)
  for (const value of values) w.varint(value)
  const reader = new BinaryReader(w.take())
  t.same(values.map(() => Number(reader.uint64())), values)
})

t.test('strings: short ASCII, non-ASCII, and long enough for a two-byte length', async (t) => {
  const texts = ['', 'GET', '/v1/participants/gonka1abc', 'é', `ä${'x'.repeat(126)}`, 'x'.repeat(128), `${'€'.repeat(50)}`, 'y'.repeat(20_000)]
  const w = new ProtobufWriter(8)
  for (const text of texts) w.string(text)
  const reader = new BinaryReader(w.take())
  t.same(texts.map(() => reader.string()), texts)
})

t.test('a nested message whose length outgrows the byte set aside for it is moved whole', async (t) => {
  const w = new ProtobufWriter(16)
  w.byte(tag(1, LEN))
  const outer = w.begin(1)
  w.byte(tag(1, LEN))
  w.string('k'.repeat(200))
  w.byte(tag(2, VARINT))
  w.varint(300)
  w.end(outer, 1)
  w.byte(tag(2, VARINT))
  w.varint(7)
  const reader = new BinaryReader(w.take())
  t.same(reader.tag(), [1, LEN])
  const inner = new BinaryReader(reader.bytes())
  t.same(inner.tag(), [1, LEN])
  t.equal(inner.string(), 'k'.repeat(200))
  t.same(inner.tag(), [2, VARINT])
  t.equal(inner.uint32(), 300)
  t.same(reader.tag(), [2, VARINT], 'what follows the nested message is intact')
  t.equal(reader.uint32(), 7)
})

t.test('ids as the bytes their hex spells; times as fixed64 nanoseconds since the epoch', async (t) => {
  const w = new ProtobufWriter()
  w.hex('0af7651916cd43dd8448eb211c80319c')
  w.byte(tag(7, I64))
  const now = performance.now()
  w.time(now)
  w.time(0)
  const reader = new BinaryReader(w.take())
  t.equal(Buffer.from(reader.bytes()).toString('hex'), '0af7651916cd43dd8448eb211c80319c')
  t.same(reader.tag(), [7, I64])
  const ns = BigInt(reader.fixed64())
  const expected = BigInt(Math.round((performance.timeOrigin + now) * 1e6))
  t.ok(ns - expected < 1000n && expected - ns < 1000n, `within a microsecond of the epoch time (${ns} against ${expected})`)
  // timeOrigin in ns, exactly: its whole seconds and the ns past them (× 1e6 as a double would round).
  const seconds = Math.floor(performance.timeOrigin / 1000)
  const origin = BigInt(seconds) * 1_000_000_000n + BigInt(Math.round((performance.timeOrigin - seconds * 1000) * 1e6))
  t.equal(BigInt(reader.fixed64()), origin, 'performance.now() 0 is performance.timeOrigin, to the nanosecond')
})

t.test('take() hands over what was written and starts again in a buffer of its own: the writer is reused while an export may still be resent', async (t) => {
  const w = new ProtobufWriter()
  w.string('first')
  const first = w.take()
  w.string('second')
  const second = w.take()
  t.equal(new BinaryReader(first).string(), 'first')
  t.equal(new BinaryReader(second).string(), 'second')
})

t.test('a field past 15 has a two-byte tag: tag() refuses it rather than write a wrong byte', async (t) => {
  t.equal(tag(15, LEN), 0x7a)
  t.throws(() => tag(16, LEN), RangeError)
  t.throws(() => tag(0, VARINT), RangeError)
})
