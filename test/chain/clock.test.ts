import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { REAL_CLOCK } from '../../src/chain/clock.js'
import { ManualClock } from '../fixtures/manual-clock.js'
import { until } from '../fixtures/wait.js'

t.test('the real clock: monotonic ms, a timer that fires once, and one that is cancelled', async (t) => {
  const before = REAL_CLOCK.now()
  const fired: string[] = []
  REAL_CLOCK.after(5, () => fired.push('kept'))
  const cancel = REAL_CLOCK.after(5, () => fired.push('cancelled'))
  cancel()
  await until(() => fired.length > 0, 'the kept timer to fire')
  await sleep(20)
  t.same(fired, ['kept'])
  t.ok(REAL_CLOCK.now() >= before + 5, 'time went on by at least the timer')
})

t.test('the tests\' manual clock fires timers in due order as it is advanced, and only then', async (t) => {
  const clock = new ManualClock(0)
  const fired: Array<[string, number]> = []
  clock.after(30, () => fired.push(['b', clock.now()]))
  clock.after(10, () => {
    fired.push(['a', clock.now()])
    clock.after(10, () => fired.push(['a+10', clock.now()]))
  })
  const cancel = clock.after(15, () => fired.push(['cancelled', clock.now()]))
  cancel()
  t.equal(clock.nextAt, 10)
  await clock.advance(9)
  t.same(fired, [], 'nothing is due before its time')
  await clock.advance(100)
  t.same(fired, [['a', 10], ['a+10', 20], ['b', 30]])
  t.equal(clock.now(), 109)
  t.equal(clock.pending, 0)
  t.equal(clock.nextAt, Infinity)
})
