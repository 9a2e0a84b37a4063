import t from 'tap'
import { eventLoopSampler, heapUsedBytes, meanDelayMs, RESOLUTION_MS, type LoopReading } from '../../src/admission/loop-sampler.js'
import { until } from '../../harness/wait.js'

t.test('the one sampler reads the event loop as it is: a blocked loop is delay and utilisation, the heap in use', async (t) => {
  const sampler = eventLoopSampler(20)
  const readings: LoopReading[] = []
  const stop = sampler.start((loop) => readings.push(loop))
  t.teardown(stop)
  // Block the loop for several samples, then let the timer run until a reading has seen it.
  await until(async () => {
    const blockedUntil = performance.now() + 120
    while (performance.now() < blockedUntil) { /* busy */ }
    await new Promise((resolve) => setTimeout(resolve, 60))
    return readings.some((loop) => loop.delayMs > 0)
  }, 'a reading that saw the blocked loop')
  t.ok(readings.some((loop) => loop.utilization > 0.5), `a blocked sample is mostly busy: ${readings.map((loop) => loop.utilization.toFixed(2)).join(', ')}`)
  t.ok(readings.every((loop) => loop.heapUsedBytes > 1_000_000), 'the heap in use, in bytes (more than a megabyte in any Node process)')
  stop()
  const count = readings.length
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(readings.length, count, 'no reading once stopped')
  t.ok(sampler.now() > 0, 'the real clock')
  t.ok(heapUsedBytes() > 0)
})

t.test('a sample\'s delay: the mean less the resolution, never negative; no tick at all is Infinity', async (t) => {
  t.equal(meanDelayMs(35e6), 35 - RESOLUTION_MS)
  t.equal(meanDelayMs(5e6), 0, 'within the resolution: no delay')
  t.equal(meanDelayMs(Number.NaN), Infinity, 'the loop blocked for the whole sample')
})
