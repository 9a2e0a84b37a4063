import { LRUCache } from 'lru-cache'
import { REAL_CLOCK, type Clock } from '../clock.js'
import { gcraTake, type RateCounter, type Take } from '../shared/rate-counter.js'

// The per-client limit counted by this replica alone: without a shared tier, and while the
// store does not answer. The same GCRA token bucket as the pool's (src/shared/rate-counter.ts):
// one number per client, the time its bucket is full again. At most MAX_LOCAL_CLIENTS
// clients are remembered (least recently seen forgotten first), so a flood of distinct
// addresses cannot grow the process: a forgotten client starts again with a full bucket.

export const MAX_LOCAL_CLIENTS = 100_000

export class LocalRateCounter implements RateCounter {
  readonly #full: LRUCache<string, number>
  readonly #clock: Clock

  constructor (clock: Clock = REAL_CLOCK, maxClients = MAX_LOCAL_CLIENTS) {
    this.#clock = clock
    this.#full = new LRUCache({ max: maxClients })
  }

  /** How many clients are remembered. */
  get size (): number {
    return this.#full.size
  }

  async take (client: string, intervalMs: number, toleranceMs: number): Promise<Take> {
    return this.takeNow(client, intervalMs, toleranceMs)
  }

  /** take(), answered at once. */
  takeNow (client: string, intervalMs: number, toleranceMs: number): Take {
    const now = this.#clock.now()
    const full = Math.max(this.#full.get(client) ?? now, now)
    const take = gcraTake(full + intervalMs - now, intervalMs, toleranceMs)
    if (take.taken) this.#full.set(client, full + intervalMs)
    return take
  }
}
