import Fastify from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { admissionControl, BOOT_GRACE_MS } from '../../src/admission/admission.js'
import { type DelayAdmission, POLICY_DEFAULTS } from '../../src/admission/pie.js'
import { Shedding } from '../../src/admission/shedding.js'
import { Pipelining } from '../../src/http/pipelining.js'
import { requestLifecycle } from '../../src/http/request-lifecycle.js'
import { ScriptedLoop } from '../fixtures/scripted-loop.js'
import { until } from '../../harness/wait.js'

const TARGET = 20
const CALM = { delayMs: 0, utilization: 0.2 }

async function appWithAdmission (t: Test, loadShedding: Parameters<typeof admissionControl>[2]) {
  const lines: Array<Record<string, unknown>> = []
  const shedding = new Shedding({ info: (fields, msg) => { lines.push({ ...fields, msg }) } }, undefined, 50)
  const app = Fastify()
  // The lifecycle's one 'close' listener ends each admitted request's count in fair share, as
  // in the app (app.ts): without it every request would stay counted.
  requestLifecycle(app, { pipelining: new Pipelining() })
  let policy!: DelayAdmission
  await app.register(async (scope) => {
    policy = await admissionControl(scope, shedding, loadShedding)
    scope.get('/work', async () => ({ ok: true }))
  })
  app.get('/outside', async () => ({ ok: true }))
  t.teardown(() => app.close())
  return { app, shedding, lines, policy: () => policy }
}

t.test('the heap hard limit sheds in its scope with a cheap 503; the boot is not overload', async (t) => {
  // A heap limit of 1 byte trips at every sample: the overload is certain, not timed.
  const loop = new ScriptedLoop()
  const { app, shedding, lines } = await appWithAdmission(t, { maxHeapUsedBytes: 1, sampleInterval: 10, sampler: loop })
  await app.ready()
  // Real time passing changes nothing: the scripted sampler alone gives readings.
  await sleep(50)
  loop.feed(CALM, BOOT_GRACE_MS / loop.intervalMs - 1)
  t.equal((await app.inject('/work')).statusCode, 200, 'within the boot grace')
  loop.feed(CALM)
  const res = await app.inject('/work')
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '1')
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.same(res.json(), { message: 'Service Unavailable' })
  t.equal((await app.inject('/outside')).statusCode, 200, 'outside the scope nothing is shed')
  t.same(shedding.total, { heapUsedBytes: 1 })
  await until(() => lines.length > 0, 'the summary line')
  t.match(lines, [{ msg: 'shedding', count: 1, reason: 'heapUsedBytes' }])
})

t.test('the sampler feeds the event loop\'s readings to the policy, capped at 4× the target', async (t) => {
  const { app, policy } = await appWithAdmission(t, { maxEventLoopDelay: 20, sampleInterval: 20 })
  await app.ready()
  await sleep(BOOT_GRACE_MS + 50)
  // Every reading the policy is given, recorded as it arrives: the latest one alone would be
  // back to 0 by the time a loaded machine runs the assertion.
  const readings: number[] = []
  const observe = policy().observe.bind(policy())
  policy().observe = (reading, now) => { readings.push(reading.delayMs); observe(reading, now) }
  // Block the event loop for longer than a sample, then let the sampler's 20 ms timer run,
  // until a reading has seen the block.
  await until(async () => {
    const blockedUntil = performance.now() + 120
    while (performance.now() < blockedUntil) { /* busy */ }
    await sleep(60)
    return readings.some((delayMs) => delayMs > 0)
  }, 'a reading that saw the blocked loop')
  t.ok(Math.max(...readings) <= 80, `capped at 4× the target: ${Math.max(...readings)} ms`)
  t.equal((await app.inject('/work')).statusCode, 200, 'a single stall is a burst, not overload')
})

t.test('with no delay target the sampler does not run', async (t) => {
  const { app, policy } = await appWithAdmission(t, { maxEventLoopDelay: 0, sampleInterval: 10 })
  await app.ready()
  await sleep(50)
  t.equal(policy().delayMs, 0)
  t.equal((await app.inject('/work')).statusCode, 200)
})

t.test('a live app under sustained overload sheds a share of its requests, says so once per period, and recovers', async (t) => {
  const loop = new ScriptedLoop()
  const { app, shedding, lines } = await appWithAdmission(t, { maxEventLoopDelay: TARGET, sampler: loop })
  await app.ready()
  // Readings within the boot's grace are ignored, however bad.
  loop.feed({ delayMs: 4 * TARGET, utilization: 1 }, BOOT_GRACE_MS / loop.intervalMs)
  t.equal((await app.inject('/work')).statusCode, 200, 'the boot is not overload')
  // Past the grace, behind for longer than the burst allowance.
  loop.feed({ delayMs: 4 * TARGET, utilization: 1 }, POLICY_DEFAULTS.burstAllowanceMs / loop.intervalMs + 3)
  const statuses = await Promise.all(Array.from({ length: 100 }, async () => (await app.inject('/work')).statusCode))
  const refused = statuses.filter((s) => s === 503).length
  t.ok(refused > 0 && refused < 100, `${refused} of 100 shed`)
  t.equal(shedding.total.eventLoopDelay, refused)
  const summarised = (): number => lines.reduce((sum, l) => sum + (l.count as number), 0)
  await until(() => summarised() === refused, 'the summary lines to count every refusal')
  t.match(lines[0], { msg: 'shedding', reason: 'eventLoopDelay', eventLoopDelayMs: 4 * TARGET, dropProbability: Number }, 'one line per period, not per request')
  // The delay is back under the target: shedding fades out.
  loop.feed(CALM, 10)
  const after = await Promise.all(Array.from({ length: 20 }, async () => (await app.inject('/work')).statusCode))
  t.same(new Set(after), new Set([200]))
})

t.test('the utilisation hard limit, when set, sheds everything while a sample is over it, with its own reason', async (t) => {
  const loop = new ScriptedLoop()
  const { app, shedding } = await appWithAdmission(t, { maxEventLoopUtilization: 0.9, maxEventLoopDelay: 0, sampler: loop })
  await app.ready()
  loop.feed(CALM, BOOT_GRACE_MS / loop.intervalMs)
  loop.feed({ delayMs: 0, utilization: 0.95 })
  t.equal((await app.inject('/work')).statusCode, 503, 'over the limit')
  t.same(shedding.total, { eventLoopUtilization: 1 })
  loop.feed(CALM)
  t.equal((await app.inject('/work')).statusCode, 200, 'back under it, served again')
})
