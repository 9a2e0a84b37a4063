import { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire'
import t from 'tap'
import { timeField } from '../../src/tracing/otlp-fields.js'
import { SpanContext } from '../../src/tracing/span-records.js'

// A span's time is a fixed64 of nanoseconds since the epoch, about 2^60 today: a double holds
// 2^53 exactly, so the product ms × 10^6 taken as one double would lose the last bits.

const TRACE = '0af7651916cd43dd8448eb211c80319c'
const SPAN = 'b7ad6b7169203331'
/** Field 7 (a span's start), wire type 1 (64-bit): the tag timeField is given. */
const FIXED64_FIELD_7 = (7 << 3) | 1

function writtenNs (wallClockMs: number, monotonicMs: number, ms: number): bigint {
  const w = new BinaryWriter()
  timeField(w, FIXED64_FIELD_7, new SpanContext(TRACE, SPAN, '', '', true, wallClockMs, monotonicMs), ms)
  const r = new BinaryReader(w.finish())
  r.tag()
  return BigInt(r.fixed64())
}

t.test('a time field is the wall clock\'s nanoseconds plus the monotonic time since, exact to the nanosecond', async (t) => {
  const cases: Array<[number, number, number, bigint]> = [
    // wall clock ms, monotonic ms at that moment, the span's monotonic ms, the nanoseconds expected
    [1_764_000_000_123, 1000, 1000.000001, 1_764_000_000_123_000_001n],
    [1_764_000_000_123, 1000, 999.5, 1_764_000_000_122_500_000n],
    [4_102_444_800_000, 3.25, 3.25 + 86_400_000.000007, 4_102_531_200_000_000_007n],
    [1_048_575, 10, 11, 1_048_576_000_000n] // a carry from the low 32 bits into the high ones
  ]
  for (const [wallClockMs, monotonicMs, ms, expected] of cases) {
    t.equal(writtenNs(wallClockMs, monotonicMs, ms), expected, `${wallClockMs} + (${ms} − ${monotonicMs}) ms`)
  }
  const naive = BigInt(Math.round((1_764_000_000_123 + 0.000001) * 1e6))
  t.not(naive, 1_764_000_000_123_000_001n, 'the same sum as one double is off by some nanoseconds')
})
