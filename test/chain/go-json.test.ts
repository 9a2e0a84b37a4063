import t from 'tap'
import { base64OrNull, bytesOf, goInt, hexUpper, omitEmpty, rfc3339Nano } from '../../src/chain/go-json.js'

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

t.test('64-bit integers are exact numbers', async (t) => {
  t.equal(goInt('101'), 101)
  t.equal(goInt('-9223372036854775808'), -9223372036854775808n)
  t.equal(goInt(undefined), 0)
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
