// The pace of the clients far over their share: low at first and grown while used and the loop
// keeps up, halved at each busy sample down to a floor, never grown far past what is used, and
// spread over time rather than spent at once. On a clock stepped by hand, so the numbers
// are exact.
import t, { type Test } from 'tap'
import type { Clock } from '../../src/clock.js'
import { ExcessPace, MIN_PER_S, STEP_PER_S } from '../../src/admission/excess-pace.js'

const SAMPLE_MS = 100

/** Time that moves only by advance(): the pace sets no timer. */
class SteppedClock implements Clock {
  #now = 1_000_000
  now (): number { return this.#now }
  after (): () => void { throw new Error('the pace sets no timer') }
  advance (ms: number): void { this.#now += ms }
}

/** Asks `count` times, `everyMs` apart, from now: how many went in. */
function ask (pace: ExcessPace, clock: SteppedClock, count: number, everyMs: number): number {
  let admitted = 0
  for (let i = 0; i < count; i++) {
    if (pace.take()) admitted++
    clock.advance(everyMs)
  }
  return admitted
}

/** A keeping-up sample with the far-over clients asking `count` times, evenly over it. */
function keepUp (pace: ExcessPace, clock: SteppedClock, count: number): void {
  if (count === 0) clock.advance(SAMPLE_MS)
  else ask(pace, clock, count, SAMPLE_MS / count)
  pace.observe(false)
}

/** A pace grown past 2,000/s by samples that keep up, then a sample using 1,000/s found busy: 500/s. */
function pacedAt500 (t: Test): { pace: ExcessPace, clock: SteppedClock } {
  const clock = new SteppedClock()
  const pace = new ExcessPace(clock)
  for (let i = 0; i < 30 && pace.perSecond < 2000; i++) keepUp(pace, clock, 400)
  t.ok(pace.perSecond >= 2000, `grown to ${pace.perSecond.toFixed(0)}/s while used and kept up with`)
  // A rest, then 200 asks in 100 ms: 1,000/s over the sample's 200 ms, all let in.
  clock.advance(SAMPLE_MS)
  t.equal(ask(pace, clock, 200, 0.5), 200)
  pace.observe(true)
  t.equal(pace.perSecond, 500, 'a busy sample halves what was used (1,000/s)')
  return { pace, clock }
}

t.test('a busy sample halves the rate, down to a floor: slowed, never starved', async (t) => {
  const { pace, clock } = pacedAt500(t)
  // 400 asks over a sample (4 per ms): 500/s lets 50 in, and what the bucket held (12.5 at most).
  const admitted = ask(pace, clock, 400, 0.25)
  t.ok(admitted >= 45 && admitted <= 62, `${admitted} of 400 asked in a sample let in at 500/s`)
  pace.observe(true)
  t.ok(Math.abs(pace.perSecond - 250) < 30, `halved again: ${pace.perSecond}/s`)
  for (let i = 0; i < 20; i++) {
    ask(pace, clock, 400, 0.25)
    pace.observe(true)
  }
  t.equal(pace.perSecond, MIN_PER_S, 'the floor')
  const atFloor = ask(pace, clock, 4000, 0.25)
  t.ok(atFloor >= 9 && atFloor <= 11, `${atFloor} let in over a second at the floor`)
})

t.test('spread over the sample: at most a quarter of a sample\'s worth at once', async (t) => {
  const { pace, clock } = pacedAt500(t)
  clock.advance(SAMPLE_MS)
  // A burst of 100 asks at one instant, after a sample's rest: the bucket holds 12.5.
  t.equal(ask(pace, clock, 100, 0), 12)
})

t.test('the loop keeping up: the rate grows while used, never far past what is used', async (t) => {
  const { pace, clock } = pacedAt500(t)
  // Used whole (2,000 asks a second against 500/s): grows by a quarter and a step a sample.
  ask(pace, clock, 400, 0.25)
  pace.observe(false)
  t.equal(pace.perSecond, 500 * 1.25 + STEP_PER_S)
  ask(pace, clock, 400, 0.25)
  pace.observe(false)
  t.equal(pace.perSecond, (500 * 1.25 + STEP_PER_S) * 1.25 + STEP_PER_S)
  // A sample in which the far-over clients asked 10 times: twice that and a step, not more,
  // so that a rate left unused cannot let a burst through at once.
  const used = ask(pace, clock, 10, 10)
  pace.observe(false)
  t.equal(pace.perSecond, 2 * used * 10 + STEP_PER_S, `${used} let in over the sample: 2 × ${used * 10}/s + a step`)
  clock.advance(1000)
  t.equal(ask(pace, clock, 100, 0), Math.floor(pace.perSecond * 0.025), 'a burst after a rest: the bucket\'s quarter sample')
})

t.test('a scraper\'s first requests: a step a second at first, grown within about a second to 1,000/s while used and the loop keeps up', async (t) => {
  const clock = new SteppedClock()
  const pace = new ExcessPace(clock)
  t.equal(pace.perSecond, STEP_PER_S)
  // 4,096 connections asking at once: one goes in (the bucket's least), not all of them.
  t.equal(ask(pace, clock, 4096, 0), 0, 'nothing earned yet')
  clock.advance(SAMPLE_MS)
  t.equal(ask(pace, clock, 4096, 0), 1, 'a burst of one at 20/s')
  pace.observe(false)
  let samples = 1
  for (; pace.perSecond < 1000 && samples < 50; samples++) keepUp(pace, clock, 400)
  t.ok(samples * SAMPLE_MS <= 1300, `1,000/s reached after ${samples} samples of ${SAMPLE_MS} ms`)
  // Not used, it falls back to where it started: the next scraper starts low again.
  keepUp(pace, clock, 0)
  t.equal(pace.perSecond, STEP_PER_S)
})
