import type { Clock } from '../clock.js'

// The one structure that holds long-polls (docs/waiting.md): waiters grouped by the height they
// wait to see passed, woken together by a new head, and a wheel of deadline slots swept by one
// timer while anyone waits, so a held request costs no timer and no chain read of its own.

/** Why a waiter was woken: a head above its height, its wait over, the drain, or its client gone. */
export type WakeReason = 'head' | 'timeout' | 'drain' | 'gone'

/** How finely deadlines are kept: a waiter's wait ends up to this much late (its jitter is larger). */
export const SWEEP_MS = 100

interface Waiter {
  readonly afterHeight: number
  readonly slot: number
  readonly wake: (reason: WakeReason) => void
}

/**
 * Held requests, each waiting for a head above its height or for its deadline, whichever comes
 * first; woken exactly once. Bounded by its callers' quota (src/waiting/wait-quota.ts).
 */
export class Waiters {
  readonly #clock: Clock
  readonly #byHeight = new Map<number, Set<Waiter>>()
  readonly #bySlot = new Map<number, Set<Waiter>>()
  #size = 0
  #sweptSlot = 0
  #cancelSweep: (() => void) | undefined

  constructor (clock: Clock) {
    this.#clock = clock
  }

  /** Requests held now. */
  get size (): number {
    return this.#size
  }

  /**
   * Holds a waiter until a head above `afterHeight` or `waitMs` from now; `wake` is called
   * once, with why. The returned function wakes it as 'gone' (its client left), if still held.
   */
  hold (afterHeight: number, waitMs: number, wake: (reason: WakeReason) => void): () => void {
    const slot = Math.ceil((this.#clock.now() + waitMs) / SWEEP_MS)
    const waiter: Waiter = { afterHeight, slot, wake }
    add(this.#byHeight, afterHeight, waiter)
    add(this.#bySlot, slot, waiter)
    if (this.#size++ === 0) this.#armSweep()
    return () => this.#release(waiter, 'gone')
  }

  /** A new head: wakes every waiter for a height below it. */
  wakeBelow (head: number): void {
    for (const [height, waiters] of this.#byHeight) {
      if (height < head) for (const waiter of waiters) this.#release(waiter, 'head')
    }
  }

  /** The drain: wakes every waiter now. */
  wakeAll (): void {
    for (const waiters of this.#byHeight.values()) {
      for (const waiter of waiters) this.#release(waiter, 'drain')
    }
  }

  #release (waiter: Waiter, reason: WakeReason): void {
    if (!remove(this.#byHeight, waiter.afterHeight, waiter)) return
    remove(this.#bySlot, waiter.slot, waiter)
    if (--this.#size === 0) this.#cancelSweep?.()
    waiter.wake(reason)
  }

  #armSweep (): void {
    this.#sweptSlot = Math.floor(this.#clock.now() / SWEEP_MS)
    this.#cancelSweep = this.#clock.after(SWEEP_MS, () => this.#sweep())
  }

  /** Wakes the waiters whose slot has passed, then sweeps again while anyone waits. */
  #sweep (): void {
    const now = Math.floor(this.#clock.now() / SWEEP_MS)
    for (let slot = this.#sweptSlot + 1; slot <= now; slot++) {
      const due = this.#bySlot.get(slot)
      if (due !== undefined) for (const waiter of due) this.#release(waiter, 'timeout')
    }
    this.#sweptSlot = now
    if (this.#size > 0) this.#cancelSweep = this.#clock.after(SWEEP_MS, () => this.#sweep())
  }
}

function add (map: Map<number, Set<Waiter>>, key: number, waiter: Waiter): void {
  const set = map.get(key)
  if (set === undefined) map.set(key, new Set([waiter]))
  else set.add(waiter)
}

function remove (map: Map<number, Set<Waiter>>, key: number, waiter: Waiter): boolean {
  const set = map.get(key)
  if (set === undefined || !set.delete(waiter)) return false
  if (set.size === 0) map.delete(key)
  return true
}
