import t from 'tap'
import { SWEEP_MS, Waiters, type WakeReason } from '../../src/waiting/waiters.js'
import { ManualClock } from '../fixtures/manual-clock.js'

t.test('a head wakes the waiters below it, once each; the rest keep waiting', async (t) => {
  const clock = new ManualClock()
  const waiters = new Waiters(clock)
  const woken: Array<[string, WakeReason]> = []
  const release = waiters.hold(10, 5000, (reason) => woken.push(['a', reason]))
  waiters.hold(10, 5000, (reason) => woken.push(['b', reason]))
  waiters.hold(12, 5000, (reason) => woken.push(['c', reason]))
  t.equal(waiters.size, 3)
  waiters.wakeBelow(10)
  t.same(woken, [], 'a head at their height wakes nobody')
  waiters.wakeBelow(11)
  t.same(woken, [['a', 'head'], ['b', 'head']])
  release()
  t.equal(woken.length, 2, 'a waiter already woken is not woken again')
  waiters.wakeAll()
  t.same(woken.at(-1), ['c', 'drain'])
  t.equal(waiters.size, 0)
  t.equal(clock.pending, 0, 'no sweep timer while nobody waits')
})

t.test('one sweep timer ends each wait within a sweep of its deadline; a client gone is released', async (t) => {
  const clock = new ManualClock()
  const waiters = new Waiters(clock)
  const woken: Array<[number, WakeReason]> = []
  for (let i = 0; i < 100; i++) waiters.hold(1, 1000 + i * 10, (reason) => woken.push([i, reason]))
  const gone = waiters.hold(1, 5000, (reason) => woken.push([-1, reason]))
  t.equal(clock.pending, 1, 'one timer for every waiter')
  await clock.advance(999)
  t.equal(woken.length, 0)
  await clock.advance(1 + SWEEP_MS)
  t.ok(woken.length >= 10 && woken.length <= 20, `the first ones within a sweep of their deadline (${woken.length})`)
  await clock.advance(1000)
  t.equal(woken.length, 100)
  t.ok(woken.every(([, reason]) => reason === 'timeout'))
  gone()
  t.same(woken.at(-1), [-1, 'gone'])
  await clock.advance(5000)
  t.equal(clock.pending, 0)
})
