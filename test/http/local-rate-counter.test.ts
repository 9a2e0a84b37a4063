import t from 'tap'
import { LocalRateCounter } from '../../src/http/local-rate-counter.js'
import { ManualClock } from '../fixtures/manual-clock.js'

// 600/1m: a token every 100 ms, a bucket of 600 (tolerance 60 000 ms).
const INTERVAL = 100
const TOLERANCE = 60_000

t.test('a full bucket gives its burst at once, then one token per interval', async (t) => {
  const clock = new ManualClock()
  const counter = new LocalRateCounter(clock)
  for (let i = 1; i <= 600; i++) {
    const take = await counter.take('a', INTERVAL, TOLERANCE)
    if (!take.taken || take.ms !== i * INTERVAL) t.fail(`token ${i}: ${JSON.stringify(take)}`)
  }
  t.same(counter.takeNow('a', INTERVAL, TOLERANCE), { taken: false, ms: 100 }, 'the 601st: one more token in 100 ms')
  t.same(counter.takeNow('b', INTERVAL, TOLERANCE), { taken: true, ms: 100 }, 'another client has its own bucket')
  await clock.advance(99)
  t.equal(counter.takeNow('a', INTERVAL, TOLERANCE).taken, false)
  await clock.advance(1)
  t.same(counter.takeNow('a', INTERVAL, TOLERANCE), { taken: true, ms: TOLERANCE }, 'refilled: one, and the bucket empty again')
  await clock.advance(TOLERANCE)
  t.same(counter.takeNow('a', INTERVAL, TOLERANCE), { taken: true, ms: INTERVAL }, 'a minute idle: full again')
})

t.test('memory stays bounded whatever the number of clients: the least recently seen are forgotten', async (t) => {
  const counter = new LocalRateCounter(new ManualClock(), 1000)
  for (let i = 0; i < 100_000; i++) counter.takeNow(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, INTERVAL, TOLERANCE)
  t.equal(counter.size, 1000, '100 000 distinct clients, 1 000 remembered')
})
