import t from 'tap'
import { newSpanId, newTraceId } from '../../src/tracing/ids.js'

t.test('ids: lower-case hex of the right length, never all zeros, not repeated across refills of the pool', async (t) => {
  const seen = new Set<string>()
  // 4 KiB a pool: 3000 traces (24 bytes each) refill it many times.
  for (let i = 0; i < 3000; i++) {
    const trace = newTraceId()
    const span = newSpanId()
    if (!/^[0-9a-f]{32}$/.test(trace) || !/^[0-9a-f]{16}$/.test(span)) t.fail(`malformed: ${trace} ${span}`)
    seen.add(trace)
    seen.add(span)
  }
  t.equal(seen.size, 6000, 'every id its own')
})
