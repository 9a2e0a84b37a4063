import { REAL_CLOCK, type Clock } from '../clock.js'

// How fast the requests of clients far over their share (fair-share.ts) are let in, as TCP
// paces a sender: a rate that halves at each sample of the event loop that finds it busy or
// behind and grows while it keeps up (additive and multiplicative increase, multiplicative
// decrease), spent through a token bucket so that what it lets in is spread over the sample.
// Without it the far-over client was refused whole while the loop was busy and let in whole
// the next sample it was not: admissions swung between 15 and 200 per 100 ms, and each swing's
// answers, arriving together, were the polite clients' slowest reads. It starts low, where a
// sample in which none was used leaves it, and grows as it is used (TCP's slow start): a
// scraper that opens 4,096 connections beside others was let in whole, up to the chain queue's
// bound, before any sample could see it; now it reaches 1,000/s in about a second while the
// loop keeps up. A lone client is never far over its share, so this never limits it.
/** The least rate it falls to: a far-over client is slowed, never starved. */
export const MIN_PER_S = 10
/** What a sample that keeps up adds to the rate, besides a quarter of it; and where the rate starts. */
export const STEP_PER_S = 20
/** The bucket holds this many seconds of the rate: a burst of a quarter of a 100 ms sample. */
const BURST_S = 0.025

export class ExcessPace {
  readonly #clock: Clock
  #perS = STEP_PER_S
  #tokens = 0
  #refilledAt: number
  #used = 0
  #sampledAt: number

  constructor (clock: Clock = REAL_CLOCK) {
    this.#clock = clock
    this.#refilledAt = this.#sampledAt = clock.now()
  }

  /** Requests a second let in now. */
  get perSecond (): number {
    return this.#perS
  }

  /** Whether one more request of a far-over client goes in now (counted when it does). */
  take (): boolean {
    this.#refill(this.#clock.now())
    if (this.#tokens < 1) return false
    this.#tokens--
    this.#used++
    return true
  }

  /** The tokens earned since the last refill, at the rate, up to the burst. */
  #refill (now: number): void {
    const earned = (this.#perS * (now - this.#refilledAt)) / 1000
    this.#tokens = Math.min(Math.max(1, this.#perS * BURST_S), this.#tokens + earned)
    this.#refilledAt = now
  }

  /** Adapts the rate to the sample of the event loop just taken (busy or behind, or keeping up), and to what was used of it. */
  observe (busy: boolean): void {
    const now = this.#clock.now()
    const usedPerS = (this.#used * 1000) / Math.max(1, now - this.#sampledAt)
    this.#used = 0
    this.#sampledAt = now
    this.#refill(now)
    if (busy) {
      this.#perS = Math.max(MIN_PER_S, Math.min(this.#perS, usedPerS) / 2)
      this.#tokens = Math.min(this.#tokens, Math.max(1, this.#perS * BURST_S))
      return
    }
    // Grown only as far as it is used (twice the last sample's use): a rate not used would
    // let a burst through at once (as TCP's congestion window validation, RFC 7661).
    this.#perS = Math.min(this.#perS * 1.25 + STEP_PER_S, 2 * usedPerS + STEP_PER_S)
  }
}
