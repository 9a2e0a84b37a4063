// Admission by load, on /v1: the hard limits (heap, utilisation; off in production), fair share
// and the far-over clients' pace (fair-admission.ts), then the PIE policy (pie.ts), all fed by
// one sampler of the event loop (loop-sampler.ts). A refused request takes the cheap 503
// (shedding.ts), or, when its client is over its share, the held 429 (fair-admission.ts).
// The one hook that asks it, after blocked routes and the per-client limit, is admit.ts's.
// docs/overload.md says how it behaves, and why.
import type { FastifyInstance, FastifyReply, HookHandlerDoneFunction } from 'fastify'
import { Admission } from './admit.js'
import { FairAdmission, loopLoad } from './fair-admission.js'
import { eventLoopSampler, type LoopReading, type LoopSampler } from './loop-sampler.js'
import { DelayAdmission } from './pie.js'
import type { ShedReason } from '../metrics/labels.js'
import type { Shedding } from './shedding.js'

export type { LoopReading, LoopSampler }

/**
 * Thresholds of /v1's load shedding. `maxEventLoopDelay` is the policy's target delay (0: no
 * delay-based shedding); the hard limits, off unless set, shed everything while exceeded:
 * utilisation (it is not harm: off in production) and the heap (tests use it to make
 * overload certain). `sampler` replaces the event loop's readings (tests).
 */
export interface LoadShedding {
  readonly maxEventLoopDelay?: number
  readonly maxEventLoopUtilization?: number
  readonly maxHeapUsedBytes?: number
  readonly sampleInterval?: number
  readonly sampler?: LoopSampler
}

export const LOAD_SHEDDING_DEFAULTS = {
  // Well above what a saturated process that keeps up shows (a few ms with 32 closed-loop
  // connections), well below what a client notices.
  maxEventLoopDelay: 20,
  // The delay histogram (10 ms resolution) is reset every sample, so each reading is that
  // sample's alone: 100 ms (CoDel's interval) holds several ticks even when the loop is busy,
  // and lets the controller follow the load within a second.
  sampleInterval: 100
} as const

// The first moments after ready cover the boot's own work (compiling every route's
// serializers, a cold JIT), which is not overload: acting on them would turn away a fresh
// replica's first clients, just as the router admits it.
export const BOOT_GRACE_MS = 1000

/** What the one hook asks of load (admit.ts): a hard limit exceeded, then fair share, pace and the delay policy. */
export class LoadAdmission {
  readonly policy: DelayAdmission
  readonly #fair: FairAdmission
  readonly #target: number
  readonly #limits: { readonly heap: number, readonly utilization: number }
  /** Requests admitted since the last sample, reset by each. */
  #admitted = 0
  #overLimit: ShedReason | undefined

  constructor (fair: FairAdmission, loadShedding: LoadShedding) {
    this.#fair = fair
    this.#target = loadShedding.maxEventLoopDelay ?? LOAD_SHEDDING_DEFAULTS.maxEventLoopDelay
    this.#limits = { heap: loadShedding.maxHeapUsedBytes ?? 0, utilization: loadShedding.maxEventLoopUtilization ?? 0 }
    this.policy = new DelayAdmission({ targetDelayMs: this.#target })
  }

  /** The hard limit the last sample past the boot's grace found exceeded (shed everything while so), if any. */
  get overLimit (): ShedReason | undefined {
    return this.#overLimit
  }

  /** Fair share and the far-over clients' pace, then the delay policy (fair-admission.ts); `done` when served. */
  admit (reply: FastifyReply, client: string, done: HookHandlerDoneFunction): void {
    if (this.#fair.admit(reply, client, done, loopLoad(this.policy, this.#target), this.policy)) this.#admitted++
  }

  /** One sample: the hard limits, the policy, and fair share the load it makes. Readings within the boot's grace are not overload. */
  observe (loop: LoopReading, now: number, inGrace: boolean, cap: number): void {
    const admitted = this.#admitted
    this.#admitted = 0
    if (inGrace) return
    // under-pressure's order: the heap, then utilisation; 0 is off.
    const { heap, utilization } = this.#limits
    this.#overLimit = heap > 0 && loop.heapUsedBytes > heap ? 'heapUsedBytes' : utilization > 0 && loop.utilization > utilization ? 'eventLoopUtilization' : undefined
    const reading = { delayMs: Math.min(loop.delayMs, cap), utilization: loop.utilization, admitted }
    if (this.#target > 0) this.policy.observe(reading, now)
    this.#fair.observe(loopLoad(reading, this.#target))
  }
}

/**
 * Admits the routes of `app` (the /v1 scope) by load too: through `admission`, the app's one
 * hook (admit.ts), or, given none (a scope of its own, in tests), one of their own. The
 * sampler runs from ready to close; the summary line says the policy's state.
 */
export async function admissionControl (
  app: FastifyInstance, shedding: Shedding, loadShedding: LoadShedding = {}, fair = new FairAdmission({ log: app.log, shedding }), admission?: Admission
): Promise<DelayAdmission> {
  const { sampleInterval } = { ...LOAD_SHEDDING_DEFAULTS, ...loadShedding }
  const sampler = loadShedding.sampler ?? eventLoopSampler(sampleInterval)
  const load = new LoadAdmission(fair, loadShedding)
  const { policy } = load
  shedding.describeWith(() => ({
    eventLoopDelayMs: Math.round(policy.delayMs * 10) / 10,
    dropProbability: Math.round(policy.dropProbability * 1000) / 1000,
    servingShare: Math.round(policy.servingShare * 100) / 100
  }))
  ;(admission ?? Admission.register(app, { shedding })).admitByLoad(app, load)
  // Readings are capped at 4× the target, beyond which every reading makes the same step anyway.
  const cap = Math.max(sampleInterval, 4 * (loadShedding.maxEventLoopDelay ?? LOAD_SHEDDING_DEFAULTS.maxEventLoopDelay))
  let countsFrom = Infinity
  let stop: (() => void) | undefined
  app.addHook('onReady', async () => {
    countsFrom = sampler.now() + BOOT_GRACE_MS
    stop = sampler.start((loop) => {
      const now = sampler.now()
      load.observe(loop, now, now < countsFrom, cap)
    })
  })
  app.addHook('onClose', async () => stop?.())
  return policy
}
