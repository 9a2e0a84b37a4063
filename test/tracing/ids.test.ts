import t from 'tap'
import { IdPool, newSpanId, newTraceId } from '../../src/tracing/ids.js'

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

t.test('an id of all zeros (invalid in W3C Trace Context) is never handed out: it is drawn again', async (t) => {
  let fills = 0
  // The first pool all zeros (every id in it invalid), the next ones not.
  const pool = new IdPool((buffer) => { buffer.fill(fills++ === 0 ? 0 : 0x5a) })
  t.equal(pool.draw(32), '5a'.repeat(16), 'a trace id from the next pool')
  t.equal(pool.draw(16), '5a'.repeat(8))
  t.equal(fills, 2, 'the pool of zeros skipped whole, one refill')
})
