// The policy of /v1's admission control (admission.ts wires it): which requests to serve when
// the process cannot serve them all. Pure: fed readings, asked about requests, no clock of
// its own, so its tests drive it sample by sample.
//
// The policy is PIE (Proportional Integral controller Enhanced, RFC 8033), the active queue
// management of Linux and DOCSIS, applied to the event-loop delay instead of a packet queue's
// delay, with a floor on the time spent serving. Why this one:
// - It is driven by harm. The event-loop delay is how long a request that has just arrived
//   waits before the process even reads it: the queueing delay of a Node process. A saturated
//   process that keeps up (closed-loop clients, a burst it absorbs) has a short delay and sheds
//   nothing, however busy it is; utilisation cannot tell the two apart.
// - It sheds only the excess. Each request is turned away with a probability that the
//   controller raises while the delay stays above its target and lowers while it is below:
//   an integral controller settles at the share that holds the delay at the target, i.e. it
//   admits what the process can serve. A fixed threshold (the old maxEventLoopUtilization
//   0.98 per 1 s sample) can only answer all or nothing, and flips between the two.
// - It lets bursts through. As in PIE, while nothing is being shed the delay may exceed the
//   target for a burst allowance before shedding starts: a thousand requests at once are a
//   short queue, served whole, not an overload.
// - It never trades much goodput for refusals. Refusing is not free: a 503 still costs the
//   HTTP parsing, Fastify's request set-up and a response (measured: about as much CPU as
//   serving /v1/status). The policy learns what a served request costs (busy time per request
//   while saturated and shedding nothing) and, while shedding, backs off whenever the requests it serves take
//   less than `servingFloor` of the busy time: for requests that cost little more to serve
//   than to refuse, shedding cannot shorten the queue, and serving at capacity is the best
//   there is. The floor (0.85) is the goodput a replica keeps under any overload.
// Adapted from RFC 8033, which tunes for TCP flows that back off at the first drops: the step
// is proportional to log2(delay / target), bounded to ±2, so the probability reaches the
// large shares that clients which do not back off need within a second; and a delay while
// the event loop still has idle time (CPU taken by another process, a GC pause) lowers the
// probability instead of raising it, because shedding would not cure it.
/** One sample: what the event loop showed, and how many requests were let through. */
export interface Reading {
  /** Mean event-loop delay, ms (under-pressure's `eventLoopDelay`). */
  readonly delayMs: number
  /** Share of the time the event loop was busy, 0–1 (under-pressure's interval ELU). */
  readonly utilization: number
  /** Requests admitted since the previous reading. */
  readonly admitted: number
}

export interface PolicyOptions {
  /** The delay the controller holds the process at under overload; at or below it nothing is shed. */
  readonly targetDelayMs: number
  /** How long the delay may exceed the target, while nothing is being shed, before shedding starts. */
  readonly burstAllowanceMs?: number
  /** Change of the drop probability per sample, per doubling of the delay over (or under) the target. */
  readonly gain?: number
  /** Never shed more than this share: a replica that is busy is not broken. */
  readonly maxDropProbability?: number
  /** At or above this utilisation the delay is the process's own backlog, which shedding cures. */
  readonly busyUtilization?: number
  /** While shedding, serving must take at least this share of the busy time, or the policy sheds less. */
  readonly servingFloor?: number
  /** Uniform in [0, 1); injectable for tests. */
  readonly random?: () => number
}

export const POLICY_DEFAULTS = {
  burstAllowanceMs: 500,
  gain: 0.05,
  maxDropProbability: 0.95,
  busyUtilization: 0.9,
  servingFloor: 0.85
} as const

// Decayed sums forget a sample's weight by this factor per sample: about the last second at
// 100 ms samples. Sums, not an average of per-sample ratios: a sample with one long loop
// iteration in it is lumpy, and weighs by its size.
const MEMORY = 0.9
// Fewer requests than this in a sample say little about what one costs.
const MIN_REQUESTS = 20
// The serving share is judged once it rests on this much busy time spent shedding.
const JUDGE_AFTER_MS = 300

/** A ratio of decayed sums. */
class Ratio {
  #num = 0
  #den = 0

  add (num: number, den: number): void {
    this.#num = this.#num * MEMORY + num
    this.#den = this.#den * MEMORY + den
  }

  reset (): void {
    this.#num = 0
    this.#den = 0
  }

  /** What the ratio rests on (decayed). */
  get weight (): number {
    return this.#den
  }

  get value (): number {
    return this.#den > 0 ? this.#num / this.#den : Number.NaN
  }
}

/** PIE on the event-loop delay, with a serving floor: fed one reading per sample, asked once per request. */
export class DelayAdmission {
  readonly #target: number
  readonly #burstAllowance: number
  readonly #gain: number
  readonly #max: number
  readonly #busy: number
  readonly #floor: number
  readonly #random: () => number
  #p = 0
  #allowance: number
  #lastAt: number | undefined
  #delayMs = 0
  #utilization = 0
  // Busy ms per admitted request, measured while saturated and shedding nothing.
  readonly #cost = new Ratio()
  // While shedding: estimated ms spent serving (admitted × cost) per busy ms.
  readonly #serving = new Ratio()

  constructor (options: PolicyOptions) {
    this.#target = options.targetDelayMs
    this.#burstAllowance = options.burstAllowanceMs ?? POLICY_DEFAULTS.burstAllowanceMs
    this.#gain = options.gain ?? POLICY_DEFAULTS.gain
    this.#max = options.maxDropProbability ?? POLICY_DEFAULTS.maxDropProbability
    this.#busy = options.busyUtilization ?? POLICY_DEFAULTS.busyUtilization
    this.#floor = options.servingFloor ?? POLICY_DEFAULTS.servingFloor
    this.#random = options.random ?? Math.random
    this.#allowance = this.#burstAllowance
  }

  /** The share of requests currently turned away, 0 … maxDropProbability. */
  get dropProbability (): number {
    return this.#p
  }

  /** The delay of the last reading, ms. */
  get delayMs (): number {
    return this.#delayMs
  }

  /** The utilisation of the last reading, 0–1. */
  get utilization (): number {
    return this.#utilization
  }

  /** Busy ms one served request costs (NaN until measured). */
  get costMs (): number {
    return this.#cost.value
  }

  /** While shedding, the share of the busy time spent serving (NaN otherwise). */
  get servingShare (): number {
    return this.#serving.value
  }

  /** Takes one sample's reading, taken at `now` (ms, monotonic). */
  observe (reading: Reading, now: number): void {
    // The first reading only starts the clock: what it covers is not known.
    const elapsed = now - (this.#lastAt ?? now)
    this.#lastAt = now
    if (elapsed <= 0) return
    this.#delayMs = reading.delayMs
    this.#utilization = reading.utilization
    const busyMs = reading.utilization * elapsed
    const busy = reading.utilization >= this.#busy
    if (this.#p === 0) {
      // Measured saturated, as under overload: a lightly loaded process spends more per request.
      if (busy && reading.admitted >= MIN_REQUESTS) this.#cost.add(busyMs, reading.admitted)
      this.#serving.reset()
    } else if (busy && this.#cost.weight > 0) {
      this.#serving.add(reading.admitted * this.#cost.value, busyMs)
    }
    const ratio = reading.delayMs / this.#target
    if (this.#p === 0) {
      // PIE's burst allowance: it refills whenever the delay is back under the target and
      // nothing is shed, and only a delay that outlasts it starts the controller.
      if (ratio <= 1) {
        this.#allowance = this.#burstAllowance
        return
      }
      this.#allowance -= elapsed
      if (this.#allowance > 0) return
    }
    let step: number
    if (ratio <= 1) step = -Math.min(Math.log2(1 / Math.max(ratio, 0.25)), 2)
    // Idle time in the loop: the delay is not a backlog of ours, shedding would not cure it.
    else if (!busy) step = -1
    // Refusals take more time than the floor leaves them: shed less.
    else if (this.#serving.weight >= JUDGE_AFTER_MS && this.#serving.value < this.#floor) step = -1
    else step = Math.min(Math.log2(ratio), 2)
    this.#p = Math.min(this.#max, Math.max(0, this.#p + this.#gain * step))
  }

  /** Whether to serve this request. Below half the target there is no queue to speak of (PIE does not drop there either). */
  admit (): boolean {
    return this.#p === 0 || this.#delayMs < this.#target / 2 || this.#random() >= this.#p
  }
}
