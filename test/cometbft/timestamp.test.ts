import t from 'tap'
import { parseTimestamp, timestampNanos, ZERO_TIME } from '../../src/cometbft/timestamp.js'

t.test('RFC 3339 to the nanosecond', async (t) => {
  t.same(parseTimestamp('1970-01-01T00:00:00Z'), { seconds: 0, nanos: 0 })
  t.same(parseTimestamp('2023-05-17T14:12:53.088875124Z'), { seconds: 1684332773, nanos: 88875124 })
  t.same(parseTimestamp('2023-05-17T14:12:53.5Z'), { seconds: 1684332773, nanos: 500000000 })
  t.same(parseTimestamp('2023-05-17T16:12:53.000000001+02:00'), { seconds: 1684332773, nanos: 1 }, 'an offset')
  t.same(parseTimestamp('2023-05-17T11:42:53-02:30'), { seconds: 1684332773, nanos: 0 })
  t.same(parseTimestamp('1969-12-31T23:59:59.999999999Z'), { seconds: -1, nanos: 999999999 }, 'before 1970: nanos stay positive')
  t.same(parseTimestamp('2024-02-29T00:00:00Z'), { seconds: 1709164800, nanos: 0 }, 'a leap day')
  t.same(parseTimestamp('2000-02-29T00:00:00Z'), { seconds: 951782400, nanos: 0 }, 'a 400-year leap day')
  t.same(parseTimestamp('0001-01-01T00:00:00Z'), ZERO_TIME, 'Go\'s zero time (Date would say 1901)')
  t.same(ZERO_TIME, { seconds: -62135596800, nanos: 0 })
  t.same(parseTimestamp('9999-12-31T23:59:59Z'), { seconds: 253402300799, nanos: 0 })
})

t.test('anything else is refused', async (t) => {
  for (const bad of [
    '', '2023-05-17', '2023-05-17 14:12:53Z', '2023-05-17T14:12:53', '2023-05-17T14:12:53.Z', '2023-05-17T14:12:53.0123456789Z',
    '2023-13-01T00:00:00Z', '2023-00-01T00:00:00Z', '2023-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2023-04-31T00:00:00Z', '2023-01-00T00:00:00Z',
    '2023-01-01T24:00:00Z', '2023-01-01T00:60:00Z', '2023-01-01T00:00:60Z', '2023-01-01T00:00:00+24:00', '2023-01-01T00:00:00+00:60'
  ]) {
    t.equal(parseTimestamp(bad), undefined, JSON.stringify(bad))
  }
})

t.test('timestampNanos: exact nanoseconds since 1970, before it negative', async (t) => {
  t.equal(timestampNanos({ seconds: 1_767_225_600, nanos: 123_456_789 }), 1_767_225_600_123_456_789n)
  t.equal(timestampNanos(ZERO_TIME), -62_135_596_800_000_000_000n)
})
