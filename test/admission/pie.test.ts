import t from 'tap'
import { DelayAdmission, POLICY_DEFAULTS, type Reading } from '../../src/admission/pie.js'

const TARGET = 20
const SAMPLE = 100

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
