import Fastify from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { admissionControl, BOOT_GRACE_MS, DelayAdmission, POLICY_DEFAULTS, type Reading } from '../../src/http/admission.js'
import { Shedding } from '../../src/http/shedding.js'
import { ScriptedLoop } from '../fixtures/scripted-loop.js'
import { until } from '../fixtures/wait.js'

const TARGET = 20
const SAMPLE = 100
const CALM = { delayMs: 0, utilization: 0.2 }

/** A policy on a clock the test moves: one reading every SAMPLE ms. */
function policyOnClock (options: { random?: () => number } = {}) {
  const policy = new DelayAdmission({ targetDelayMs: TARGET, random: options.random ?? (() => 0.5) })
  let now = 0
  const feed = (reading: Partial<Reading>, samples = 1): void => {
    for (let i = 0; i < samples; i++) {
      now += SAMPLE
      policy.observe({ delayMs: 0, utilization: 1, admitted: 1000, ...reading }, now)
    }
  }
  return { policy, feed }
}

t.test('a saturated process that keeps up sheds nothing, however busy', async (t) => {
  const { policy, feed } = policyOnClock({ random: () => 0 })
  // Closed-loop saturation: the loop is always busy, the delay stays under the target.
  feed({ delayMs: 5, utilization: 1 }, 200)
  feed({ delayMs: TARGET, utilization: 1 }, 200)
  t.equal(policy.dropProbability, 0)
  t.ok(policy.admit(), 'even the unluckiest request is served')
})

t.test('a burst shorter than the allowance is served whole', async (t) => {
  const { policy, feed } = policyOnClock()
  feed({ delayMs: 5 }, 10)
  // 400 ms far above the target: a thousand requests at once.
  feed({ delayMs: 400 }, POLICY_DEFAULTS.burstAllowanceMs / SAMPLE - 1)
  feed({ delayMs: 5 })
  t.equal(policy.dropProbability, 0)
  // The allowance refilled: the same burst again passes too.
  feed({ delayMs: 400 }, POLICY_DEFAULTS.burstAllowanceMs / SAMPLE - 1)
  t.equal(policy.dropProbability, 0)
})

t.test('sustained overload sheds a share that grows with how far and how long the delay exceeds the target', async (t) => {
  const { policy, feed } = policyOnClock()
  feed({ delayMs: 2 * TARGET }, POLICY_DEFAULTS.burstAllowanceMs / SAMPLE)
  t.equal(policy.dropProbability, 0, 'not during the burst allowance')
  feed({ delayMs: 2 * TARGET })
  t.equal(policy.dropProbability, POLICY_DEFAULTS.gain, 'twice the target: one step')
  feed({ delayMs: 2 * TARGET })
  t.equal(policy.dropProbability, 2 * POLICY_DEFAULTS.gain, 'an integral: it keeps growing while the delay stays')
  feed({ delayMs: 1.5 * TARGET })
  t.equal(policy.dropProbability, (2 + Math.log2(1.5)) * POLICY_DEFAULTS.gain, 'a smaller excess, a smaller step')
  feed({ delayMs: 1000 * TARGET })
  t.equal(policy.dropProbability, (4 + Math.log2(1.5)) * POLICY_DEFAULTS.gain, 'a step is at most two')
  feed({ delayMs: 1000 * TARGET }, 100)
  t.equal(policy.dropProbability, POLICY_DEFAULTS.maxDropProbability, 'never everything')
})

t.test('once the delay is back under the target, shedding fades out and the burst allowance returns', async (t) => {
  const { policy, feed } = policyOnClock()
  feed({ delayMs: 4 * TARGET }, 10)
  const shedding = policy.dropProbability
  t.ok(shedding > 0)
  feed({ delayMs: TARGET / 2 })
  t.equal(policy.dropProbability, shedding - POLICY_DEFAULTS.gain, 'half the target: one step down')
  feed({ delayMs: 0 })
  t.equal(policy.dropProbability, shedding - 3 * POLICY_DEFAULTS.gain, 'no delay at all: at most two steps')
  feed({ delayMs: 0 }, 10)
  t.equal(policy.dropProbability, 0)
  feed({ delayMs: 4 * TARGET }, POLICY_DEFAULTS.burstAllowanceMs / SAMPLE - 1)
  t.equal(policy.dropProbability, 0, 'the next overload gets its allowance again')
})

t.test('a delay while the loop has idle time is not ours to cure: shedding fades', async (t) => {
  const { policy, feed } = policyOnClock()
  // CPU taken by another process: the timers run late, yet the loop is mostly idle.
  feed({ delayMs: 4 * TARGET, utilization: 0.3 }, 50)
  t.equal(policy.dropProbability, 0, 'nothing shed')
  feed({ delayMs: 4 * TARGET }, 10)
  const shedding = policy.dropProbability
  feed({ delayMs: 4 * TARGET, utilization: 0.5 })
  t.equal(policy.dropProbability, shedding - POLICY_DEFAULTS.gain)
})

t.test('refusals may not take more than the floor leaves them: shedding that costs goodput backs off', async (t) => {
  const { policy, feed } = policyOnClock()
  // Saturated, nothing shed: 1000 requests per 100 busy ms, 0.1 ms each.
  feed({ delayMs: 5, admitted: 1000 }, 20)
  t.ok(Math.abs(policy.costMs - 0.1) < 1e-9, `cost ${policy.costMs} ms`)
  feed({ delayMs: 4 * TARGET, admitted: 1000 }, 10)
  const shedding = policy.dropProbability
  t.ok(shedding > 0)
  // Cheap refusals: 900 served per sample, serving takes 90% of the time; shedding goes on.
  feed({ delayMs: 4 * TARGET, admitted: 900 }, 40)
  t.ok(Math.abs(policy.servingShare - 0.9) < 0.01, `serving share ${policy.servingShare}`)
  t.ok(policy.dropProbability > shedding)
  // Refusals as costly as serving: 500 served per sample, half the time; shedding backs off.
  const before = policy.dropProbability
  feed({ delayMs: 4 * TARGET, admitted: 500 }, 20)
  t.ok(policy.servingShare < POLICY_DEFAULTS.servingFloor)
  t.ok(policy.dropProbability < before, `${policy.dropProbability} < ${before}`)
})

t.test('each request is admitted with probability 1 − p', async (t) => {
  let draw = 0
  const { policy, feed } = policyOnClock({ random: () => draw })
  feed({ delayMs: 4 * TARGET }, 1 + 4 + 3)
  t.ok(Math.abs(policy.dropProbability - 0.3) < 1e-9)
  draw = 0.29
  t.notOk(policy.admit())
  draw = 0.31
  t.ok(policy.admit())
  t.ok(Number.isNaN(new DelayAdmission({ targetDelayMs: TARGET }).servingShare), 'no serving share before shedding')
})

async function appWithAdmission (t: Test, loadShedding: Parameters<typeof admissionControl>[2]) {
  const lines: Array<Record<string, unknown>> = []
  const shedding = new Shedding({ info: (fields, msg) => { lines.push({ ...fields, msg }) } }, undefined, 50)
  const app = Fastify()
  let policy!: DelayAdmission
  await app.register(async (scope) => {
    policy = await admissionControl(scope, shedding, loadShedding)
    scope.get('/work', async () => ({ ok: true }))
  })
  app.get('/outside', async () => ({ ok: true }))
  t.teardown(() => app.close())
  return { app, shedding, lines, policy: () => policy }
}

t.test('under-pressure sheds in its scope with a cheap 503; the boot is not overload', async (t) => {
  // A heap limit of 1 byte trips at every sample: the overload is certain, not timed.
  const loop = new ScriptedLoop()
  const { app, shedding, lines } = await appWithAdmission(t, { maxHeapUsedBytes: 1, sampleInterval: 10, sampler: loop })
  await app.ready()
  // under-pressure's own samples (real, every 10 ms) have seen the heap.
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

t.test('the sampler feeds under-pressure\'s readings to the policy', async (t) => {
  const { app, policy } = await appWithAdmission(t, { maxEventLoopDelay: 20, sampleInterval: 20 })
  await app.ready()
  await sleep(BOOT_GRACE_MS + 50)
  // Block the event loop for longer than a sample: the next readings see the delay.
  const until = performance.now() + 120
  while (performance.now() < until) { /* busy */ }
  await sleep(100)
  t.ok(policy().delayMs > 0, `delay ${policy().delayMs} ms`)
  t.ok(policy().delayMs <= 100, 'capped at 4× the target')
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
