import { execFile } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import t from 'tap'
import { pause, REAL_CLOCK, type AfterOptions } from '../src/clock.js'
import { ManualClock } from './fixtures/manual-clock.js'
import { until } from '../harness/wait.js'

t.test('the real clock: monotonic ms, a timer that fires once, and one that is cancelled', async (t) => {
  const before = REAL_CLOCK.now()
  const fired: string[] = []
  REAL_CLOCK.after(5, () => fired.push('kept'))
  const cancel = REAL_CLOCK.after(5, () => fired.push('cancelled'))
  cancel()
  const cancelKept = REAL_CLOCK.after(5, () => fired.push('cancelled, keeping alive'), { keepsAlive: true })
  cancelKept()
  await until(() => fired.length > 0, 'the kept timer to fire')
  await sleep(20)
  t.same(fired, ['kept'])
  t.ok(REAL_CLOCK.now() >= before + 5, 'time went on by at least the timer')
})

/** What a process that has nothing to do but one REAL_CLOCK timer prints before it exits. */
async function loneTimer (ms: number, options: AfterOptions | undefined): Promise<string> {
  const loader = new URL('loader/strip-types.mjs', import.meta.url).href
  const clock = new URL('../src/clock.ts', import.meta.url).href
  const script = [
    `const { REAL_CLOCK } = await import(${JSON.stringify(clock)})`,
    `REAL_CLOCK.after(${ms}, () => process.stdout.write('fired'), ${JSON.stringify(options)})`
  ].join('\n')
  // Only PATH: the child is not measured for coverage (NODE_V8_COVERAGE is not passed on).
  const { stdout } = await promisify(execFile)(process.execPath, [`--import=${loader}`, '--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH },
    timeout: 60_000
  })
  return stdout
}

t.test('the real clock\'s timers never keep the process alive, unless asked to (the drain\'s windows)', async (t) => {
  // The unref'd timer is long: a process it held would print 'fired' (after a second), not exit at once.
  t.equal(await loneTimer(1000, undefined), '', 'by default the process exits without waiting for the timer')
  t.equal(await loneTimer(1000, { keepsAlive: false }), '', 'keepsAlive: false is the default')
  t.equal(await loneTimer(100, { keepsAlive: true }), 'fired', 'keepsAlive: the process waits for the timer')
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

t.test('the manual clock counts the pending timers that would keep the process alive', async (t) => {
  const clock = new ManualClock(0)
  clock.after(10, () => {})
  const cancel = clock.after(10, () => {}, { keepsAlive: true })
  clock.after(20, () => {}, { keepsAlive: true })
  t.equal(clock.pending, 3)
  t.equal(clock.keepingAlive, 2)
  cancel()
  t.equal(clock.keepingAlive, 1, 'a cancelled timer keeps nothing alive')
  await clock.advance(20)
  t.equal(clock.keepingAlive, 0, 'nor does one that fired')
})

t.test('pause() resolves once its time has passed on the clock it is given, not before', async (t) => {
  const clock = new ManualClock(0)
  let resolved = false
  const paused = pause(clock, 50, { keepsAlive: true }).then(() => { resolved = true })
  t.equal(clock.keepingAlive, 1, 'its options reach the timer')
  await clock.advance(49)
  await sleep(5)
  t.notOk(resolved, 'a millisecond early')
  await clock.advance(1)
  await paused
  t.ok(resolved)
})
