import { BlockTimes } from '../chain/block-times.js'
import type { Clock } from '../clock.js'

// Who looks for the next block while requests wait for one (docs/waiting.md): nothing else
// asks the chain's nodes for their heads while a replica only holds requests, so while anyone
// waits one head poll at a time runs, shared by every waiter and stream of the replica. It
// follows the chain's pace (src/chain/block-times.ts): every FAST_MS from just before the next
// block is due until it is seen, every SLOW_MS before, and never more than one poll per
// FOLLOW_MS on average. A new head then reaches waiters through ChainHeads.onHead, as a head
// from an answer or from the pool's hints (the shared tier) does.

/**
 * The average the follower's polls stay within: at most one per FOLLOW_MS (5 a second per node
 * per replica while anyone waits), and the cadence while the chain's pace is not yet learnt.
 * At 1365d2e it polled every 25 ms: 40 a second for one browser tab's stream.
 */
export const FOLLOW_MS = 200

/** Between polls from just before the next block is due until it is seen: the most a waiter then learns of it late. */
export const FAST_MS = 25

/**
 * Between polls after a block, until the next is near: a block earlier than learnt is seen this
 * late at most. Under half of EDGE_API_HEAD_MAX_AGE's default (1 s), so while anyone waits the
 * head stays confirmed and a read never waits for a poll of its own (src/chain/heights.ts).
 */
export const SLOW_MS = 500

/** Polls saved by a slow phase for the next fast one: one second of FAST_MS (the budget's burst). */
export const BURST_POLLS = 1000 / FAST_MS

/** What the follower asks: ChainHeads.poll(), one at a time and never rejecting, and its onHead. */
export interface HeadPoller {
  poll (): Promise<unknown>
  onHead (listener: (height: number) => void): () => void
}

/** Polls the heads while at least one follow() is open; one poll at a time. */
export class HeadFollower {
  readonly #heads: HeadPoller
  readonly #clock: Clock
  readonly #times = new BlockTimes()
  #rises = 0
  #following = 0
  #loop: 'idle' | 'waiting' | 'polling' = 'idle'
  /** Set whenever the loop is waiting, the only time it is called. */
  #cancel!: () => void
  /** Polls that may be made now: one more each FOLLOW_MS, at most BURST_POLLS. */
  #tokens = 0
  #tokensAt: number

  constructor (heads: HeadPoller, clock: Clock) {
    this.#heads = heads
    this.#clock = clock
    this.#tokensAt = clock.now()
    // Every rise, followed or not: the pace is learnt from any head, an answer's too.
    heads.onHead((height) => {
      this.#rises++
      this.#times.rose(height, clock.now())
    })
  }

  /** The chain's time per block as learnt (undefined: not yet), for the docs' and tests' figures. */
  get blockMs (): number | undefined {
    return this.#times.blockMs
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
    this.#cancel = this.#clock.after(this.#delay(), () => { this.#poll() })
  }

  /** Until the next poll: the chain's pace wants it, and the budget has a poll for it. */
  #delay (): number {
    const now = this.#clock.now()
    this.#refill(now)
    const from = this.#times.nextFrom()
    const wanted = from === undefined ? FOLLOW_MS : from > now ? Math.min(SLOW_MS, from - now) : FAST_MS
    return Math.max(wanted, (1 - this.#tokens) * FOLLOW_MS)
  }

  #refill (now: number): void {
    this.#tokens = Math.min(BURST_POLLS, this.#tokens + (now - this.#tokensAt) / FOLLOW_MS)
    this.#tokensAt = now
  }

  // ChainHeads.poll never rejects.
  async #poll (): Promise<void> {
    this.#loop = 'polling'
    const at = this.#clock.now()
    this.#refill(at)
    this.#tokens--
    const rises = this.#rises
    await this.#heads.poll()
    if (this.#rises === rises) this.#times.quiet(at)
    if (this.#following > 0) this.#next()
    else this.#loop = 'idle'
  }
}
