import t from 'tap'
import type { Clock } from '../../src/clock.js'
import { TIMED_OUT, withinDeadline } from '../../src/shared/deadline.js'

// A store command's deadline, on a clock the test moves and fires by hand: a reply in time
// wins, a missing one is TIMED_OUT at the deadline, a timer that fires more than a deadline
// late (this process stalled) gives the command one more deadline, and a reply read in the
// same turn as the deadline still wins.

function handClock (start = 0): { clock: Clock, fire: (at: number) => void, armed: () => boolean } {
  let now = start
  let pending: (() => void) | undefined
  const clock: Clock = {
    now: () => now,
    after: (_ms, fn) => {
      pending = fn
      return () => { pending = undefined }
    }
  }
  const fire = (at: number): void => {
    now = at
    const fn = pending
    pending = undefined
    fn?.()
  }
  return { clock, fire, armed: () => pending !== undefined }
}

t.test('a reply in time wins and its timer is cancelled', async (t) => {
  const { clock, armed } = handClock()
  t.equal(await withinDeadline(Promise.resolve('v'), clock, 10), 'v')
  t.notOk(armed(), 'no timer left behind')
})

t.test('no reply: TIMED_OUT at the deadline', async (t) => {
  const { clock, fire } = handClock()
  const result = withinDeadline(new Promise(() => {}), clock, 10)
  fire(10)
  t.equal(await result, TIMED_OUT)
})

t.test('a timer more than a deadline late (this process stalled): one more deadline, then TIMED_OUT', async (t) => {
  const { clock, fire, armed } = handClock()
  const result = withinDeadline(new Promise(() => {}), clock, 10)
  fire(50)
  t.ok(armed(), 'not judged yet: armed again')
  fire(60)
  t.equal(await result, TIMED_OUT)
})

t.test('a reply read in the turn the deadline falls due wins over it', async (t) => {
  const { clock, fire } = handClock()
  let answer!: (value: string) => void
  const result = withinDeadline(new Promise<string>((resolve) => { answer = resolve }), clock, 10)
  fire(10)
  answer('arrived during the stall')
  t.equal(await result, 'arrived during the stall')
})

t.test('a timer on time is no stall, whenever the command was sent: TIMED_OUT at its one deadline', async (t) => {
  const { clock, fire } = handClock(1_000_000)
  const result = withinDeadline(new Promise(() => {}), clock, 10)
  fire(1_000_010)
  t.equal(await result, TIMED_OUT, 'the time elapsed since it was armed, not the clock\'s reading, says a stall')
})
