import t from 'tap'
import { LocalRateCounter } from '../../src/admission/local-rate-counter.js'
import { ManualClock } from '../fixtures/manual-clock.js'

// 600/1m: a token every 100 ms, a bucket of 600 (tolerance 60 000 ms).
const INTERVAL = 100
const TOLERANCE = 60_000

t.test('a full bucket gives its burst at once, then one token per interval; each answer says the tokens left and when the next comes', async (t) => {
  const clock = new ManualClock()
  const counter = new LocalRateCounter(clock)
  for (let i = 1; i <= 600; i++) {
    const take = await counter.take('a', INTERVAL, TOLERANCE)
    // Whatever is left, one more token comes in one interval: t is never "until full" (30 s after 300).
    if (!take.taken || take.remaining !== 600 - i || take.moreMs !== INTERVAL) t.fail(`token ${i}: ${JSON.stringify(take)}`)
  }
  t.same(counter.takeNow('a', INTERVAL, TOLERANCE), { taken: false, remaining: 0, moreMs: 100 }, 'the 601st: one more token in 100 ms')
  t.same(counter.takeNow('b', INTERVAL, TOLERANCE), { taken: true, remaining: 599, moreMs: 100 }, 'another client has its own bucket')
  await clock.advance(99)
  t.same(counter.takeNow('a', INTERVAL, TOLERANCE), { taken: false, remaining: 0, moreMs: 1 })
  await clock.advance(1)
  t.same(counter.takeNow('a', INTERVAL, TOLERANCE), { taken: true, remaining: 0, moreMs: INTERVAL }, 'refilled: one, and the bucket empty again')
  await clock.advance(TOLERANCE)
  t.same(counter.takeNow('a', INTERVAL, TOLERANCE), { taken: true, remaining: 599, moreMs: INTERVAL }, 'a minute idle: full again')
  await clock.advance(250)
  t.same(counter.takeNow('a', INTERVAL, TOLERANCE), { taken: true, remaining: 599, moreMs: INTERVAL }, 'full, used one: the next is an interval away')
  t.same(counter.takeNow('a', INTERVAL, TOLERANCE), { taken: true, remaining: 598, moreMs: INTERVAL })
  await clock.advance(30)
  t.same(counter.takeNow('a', INTERVAL, TOLERANCE), { taken: true, remaining: 597, moreMs: 70 }, 'part of an interval gone by: the next token sooner')
})

t.test('a bucket whose interval is no whole number of ms: exact, 3/1s gives 3 (r = 2, 1, 0), none lost to rounding', async (t) => {
  const clock = new ManualClock()
  const counter = new LocalRateCounter(clock)
  const interval = 1000 / 3
  const takes = [1, 2, 3, 4].map(() => counter.takeNow('a', interval, 1000))
  t.same(takes.map((take) => [take.taken, take.remaining]), [[true, 2], [true, 1], [true, 0], [false, 0]])
  t.ok(Math.abs((takes[3]?.moreMs ?? 0) - interval) < 0.01, 'the 4th: one more token in a third of a second')
})

t.test('memory stays bounded whatever the number of clients: the least recently seen are forgotten', async (t) => {
  const counter = new LocalRateCounter(new ManualClock(), 1000)
  for (let i = 0; i < 100_000; i++) counter.takeNow(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, INTERVAL, TOLERANCE)
  t.equal(counter.size, 1000, '100 000 distinct clients, 1 000 remembered')
})
