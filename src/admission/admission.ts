// Admission control for /v1: the PIE policy (pie.ts) fed the event loop's readings on a
// sampler's clock, asked about each request, and under-pressure's hard limits; a refused
// request takes the cheap 503 (shedding.ts), or, when its client is over its share, the held
// 429 (fair-admission.ts). docs/overload.md says how it behaves, and why.
import underPressure, { type FastifyUnderPressureOptions } from '@fastify/under-pressure'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { REAL_CLOCK } from '../clock.js'
import { clientOf } from './client-identity.js'
import { FairAdmission, loopLoad } from './fair-admission.js'
import { DelayAdmission } from './pie.js'
import type { ShedReason } from '../metrics/labels.js'
import type { Shedding } from './shedding.js'

/** The event loop as one sample saw it. */
export interface LoopReading {
  /** Mean event-loop delay, ms. */
  readonly delayMs: number
  /** Share of the sample's time the event loop was busy, 0–1. */
  readonly utilization: number
}

/**
 * Where the policy's readings and time come from: under-pressure's figures on a timer in
 * production (`underPressureSampler`); tests script them, so that what the policy decides
 * does not depend on how fast the machine running the test is.
 */
export interface LoopSampler {
  /** Monotonic ms, on the clock the readings are taken on (REAL_CLOCK's for under-pressure's). */
  now (): number
  /** Hands `take` one reading per sample until the returned function is called. */
  start (take: (loop: LoopReading) => void): () => void
}

/**
 * Thresholds of /v1's load shedding. `maxEventLoopDelay` is the policy's target delay (0: no
 * delay-based shedding); the hard limits, off unless set, shed everything while exceeded:
 * utilisation (it is not harm: off in production) and the heap (tests use it to make
 * overload certain). `sampler` replaces under-pressure's readings (tests).
 */
export type LoadShedding = Pick<FastifyUnderPressureOptions, 'maxEventLoopDelay' | 'maxEventLoopUtilization' | 'maxHeapUsedBytes' | 'sampleInterval'> & {
  readonly sampler?: LoopSampler
}

export const LOAD_SHEDDING_DEFAULTS = {
  // Well above what a saturated process that keeps up shows (a few ms with 32 closed-loop
  // connections), well below what a client notices.
  maxEventLoopDelay: 20,
  // under-pressure resets its delay histogram (10 ms resolution) every sample, so each
  // reading is that sample's alone: 100 ms (CoDel's interval) holds several ticks even when
  // the loop is busy, and lets the controller follow the load within a second.
  sampleInterval: 100
} as const

// The first moments after ready cover the boot's own work (compiling every route's
// serializers, a cold JIT), which is not overload: acting on them would turn away a fresh
// replica's first clients, just as the router admits it.
export const BOOT_GRACE_MS = 1000

/**
 * Registers @fastify/under-pressure on `app` (the /v1 scope) and the PIE policy after it.
 * under-pressure samples the event loop every `sampleInterval` and enforces the hard limits
 * (heap, utilisation, when set) with its pressureHandler; its own delay threshold is left off
 * (it would shed everything above it, and it stops at the first limit exceeded), and an
 * onRequest hook right after it asks the policy about each request instead.
 */
export async function admissionControl (
  app: FastifyInstance, shedding: Shedding, loadShedding: LoadShedding = {}, fair = new FairAdmission({ log: app.log, shedding })
): Promise<DelayAdmission> {
  const { maxEventLoopDelay: target, sampleInterval } = { ...LOAD_SHEDDING_DEFAULTS, ...loadShedding }
  const sampler = loadShedding.sampler ?? underPressureSampler(app, sampleInterval)
  const policy = new DelayAdmission({ targetDelayMs: target })
  shedding.describeWith(() => ({
    eventLoopDelayMs: Math.round(policy.delayMs * 10) / 10,
    dropProbability: Math.round(policy.dropProbability * 1000) / 1000,
    servingShare: Math.round(policy.servingShare * 100) / 100
  }))
  const inGrace = bootGrace(app, sampler)
  await registerHardLimits(app, shedding, { ...loadShedding, sampleInterval }, () => inGrace(sampler.now()))
  // After under-pressure's hook: only requests within its hard limits get here. What the
  // policy would shed is the heaviest clients' (fair-admission.ts).
  const admitted = { count: 0 }
  app.addHook('onRequest', (request, reply, done) => {
    if (fair.admit(reply, clientOf(request), done, loopLoad(policy, target), policy)) admitted.count++
  })
  // Fed whatever the target: with 0 the policy sheds nothing, but the pace of the clients far
  // over their share still follows the load (fair-admission.ts: loopLoad).
  feedPolicy(app, sampler, policy, { target, sampleInterval, admitted, inGrace, fair })
  return policy
}

/** Whether a time on the sampler's clock is still within the boot's grace (BOOT_GRACE_MS after ready). */
function bootGrace (app: FastifyInstance, sampler: LoopSampler): (now: number) => boolean {
  let countsFrom = Infinity
  app.addHook('onReady', async () => {
    countsFrom = sampler.now() + BOOT_GRACE_MS
  })
  return (now) => now < countsFrom
}

/** under-pressure with the hard limits (heap, utilisation) when set, and its delay threshold off. */
async function registerHardLimits (
  app: FastifyInstance, shedding: Shedding, loadShedding: LoadShedding & { sampleInterval: number }, inGrace: () => boolean
): Promise<void> {
  // under-pressure names the limit exceeded; only those set below (heap, utilisation) can be.
  const pressureHandler = (_request: FastifyRequest, reply: FastifyReply, type: ShedReason): Buffer | undefined => {
    if (inGrace()) return undefined
    // Returned, not thrown: under-pressure sends a returned value as it is ("any other return
    // value than a promise or nullish will be sent to the client with reply.send", its README),
    // so the error handler never sees a shed request. Its type only declares void.
    return shedding.refuse(reply, type)
  }
  await app.register(underPressure, {
    // Interval mode: utilisation since the last sample, not since boot (fastify/under-pressure#294).
    eventLoopUtilizationMode: 'interval',
    sampleInterval: loadShedding.sampleInterval,
    maxEventLoopUtilization: loadShedding.maxEventLoopUtilization ?? 0,
    maxHeapUsedBytes: loadShedding.maxHeapUsedBytes ?? 0,
    pressureHandler: pressureHandler as unknown as FastifyUnderPressureOptions['pressureHandler']
  })
}

interface PolicyFeed {
  readonly target: number
  readonly sampleInterval: number
  /** Requests admitted since the last sample, reset by each. */
  readonly admitted: { count: number }
  readonly inGrace: (now: number) => boolean
  readonly fair: FairAdmission
}

/** Hands the policy each sample's reading and the requests admitted during it, and fair share the load it makes, until close. */
function feedPolicy (app: FastifyInstance, sampler: LoopSampler, policy: DelayAdmission, feed: PolicyFeed): void {
  // Readings are capped at 4× the target, beyond which every reading makes the same step anyway.
  const cap = Math.max(feed.sampleInterval, 4 * feed.target)
  const stop = sampler.start((loop) => {
    const now = sampler.now()
    const count = feed.admitted.count
    feed.admitted.count = 0
    if (feed.inGrace(now)) return
    const reading = { delayMs: Math.min(loop.delayMs, cap), utilization: loop.utilization, admitted: count }
    if (feed.target > 0) policy.observe(reading, now)
    feed.fair.observe(loopLoad(reading, feed.target))
  })
  app.addHook('onClose', async () => stop())
}

/**
 * under-pressure's figures, read on its own period (it has no callback per sample). Infinity
 * from it means no delay tick (10 ms resolution) at all since its last sample: the loop was
 * blocked for about all of it (the policy caps the reading).
 */
export function underPressureSampler (app: FastifyInstance, sampleInterval: number): LoopSampler {
  return {
    now: REAL_CLOCK.now,
    start: (take) => {
      const timer = setInterval(() => {
        const { eventLoopDelay, eventLoopUtilized } = app.memoryUsage()
        take({ delayMs: eventLoopDelay, utilization: eventLoopUtilized })
      }, sampleInterval)
      timer.unref()
      return () => clearInterval(timer)
    }
  }
}
