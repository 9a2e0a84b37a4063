import type { Clock } from '../clock.js'

// Who looks for the next block while requests wait for one (docs/waiting.md): nothing else
// asks the chain's nodes for their heads while a replica only holds requests, so while anyone
// waits one head poll runs every FOLLOW_MS, shared by every waiter and stream of the replica.
// A new head then reaches them through ChainHeads.onHead, as a head from an answer or from the
// pool's hints (the shared tier) does.

/**
 * Between head polls while anyone waits: the most a waiter learns of a block late. Blocks come
 * every 6-8 s, so 200 ms is 3% of a block's time, at 5 requests a second per node per replica
 * while anyone waits (one browser tab's stream); at 25 ms it was 40 (and 1365d2e's 50 ms
 * wake-up goal). A head any answer or the pool's hints tell wakes waiters at once all the same.
 */
export const FOLLOW_MS = 200

/** What the follower asks: ChainHeads.poll(), one at a time and never rejecting. */
export interface HeadPoller {
  poll (): Promise<unknown>
}

/** Polls the heads while at least one follow() is open; one poll at a time. */
export class HeadFollower {
  readonly #heads: HeadPoller
  readonly #clock: Clock
  readonly #everyMs: number
  #following = 0
  #loop: 'idle' | 'waiting' | 'polling' = 'idle'
  /** Set whenever the loop is waiting, the only time it is called. */
  #cancel!: () => void

  constructor (heads: HeadPoller, clock: Clock, everyMs = FOLLOW_MS) {
    this.#heads = heads
    this.#clock = clock
    this.#everyMs = everyMs
  }

  /** Starts following (if not yet); the returned function ends this follow, once. */
  follow (): () => void {
    if (this.#following++ === 0 && this.#loop === 'idle') this.#next()
    let open = true
    return () => {
      if (!open) return
      open = false
      if (--this.#following > 0 || this.#loop !== 'waiting') return
      this.#cancel()
      this.#loop = 'idle'
    }
  }

  #next (): void {
    this.#loop = 'waiting'
    this.#cancel = this.#clock.after(this.#everyMs, () => { this.#poll() })
  }

  // ChainHeads.poll never rejects.
  async #poll (): Promise<void> {
    this.#loop = 'polling'
    await this.#heads.poll()
    if (this.#following > 0) this.#next()
    else this.#loop = 'idle'
  }
}
