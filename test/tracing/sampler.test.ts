import t from 'tap'
import { createSampler } from '../../src/tracing/sampler.js'
import type { TraceParent } from '../../src/tracing/trace-context.js'

const parent = (sampled: boolean): TraceParent => ({ traceId: 'f'.repeat(32), spanId: '1'.repeat(16), sampled, traceState: '' })
/** A trace id whose last 56 bits, read as a fraction of 2^56, are `fraction`. */
const traceWith = (fraction: number): string => `${'0'.repeat(18)}${Math.floor(fraction * 2 ** 56).toString(16).padStart(14, '0')}`

t.test('the six samplers: a root by its own rule, a caller\'s flag by the parentbased ones only', async (t) => {
  const id = traceWith(0.5)
  const decisions = (name: Parameters<typeof createSampler>[0], ratio = 1) => {
    const sample = createSampler(name, ratio)
    return [sample(undefined, id), sample(parent(true), id), sample(parent(false), id)]
  }
  t.same(decisions('always_on'), [true, true, true])
  t.same(decisions('always_off'), [false, false, false])
  t.same(decisions('parentbased_always_on'), [true, true, false])
  t.same(decisions('parentbased_always_off'), [false, true, false])
  t.same(decisions('traceidratio', 0), [false, false, false], 'ratio 0 ignores the caller')
  t.same(decisions('traceidratio', 1), [true, true, true])
  t.same(decisions('parentbased_traceidratio', 0), [false, true, false])
})

t.test('traceidratio: sampled when the trace id\'s last 56 bits are at least 1 − ratio of 2^56 (the specification\'s rule)', async (t) => {
  const sample = createSampler('traceidratio', 0.25)
  t.equal(sample(undefined, traceWith(0.74)), false)
  t.equal(sample(undefined, traceWith(0.76)), true)
  t.equal(sample(undefined, `ffffffffffffffffff${traceWith(0.1).slice(18)}`), false, 'the first 72 bits do not count')
  // Random ids: about a quarter sampled.
  const { randomBytes } = await import('node:crypto')
  let sampled = 0
  for (let i = 0; i < 20_000; i++) if (sample(undefined, randomBytes(16).toString('hex'))) sampled++
  t.ok(sampled > 4600 && sampled < 5400, `${sampled} of 20000 sampled at 0.25`)
})
