import { FairQueue, type Refusal } from './fair-queue.js'

// A concurrency limit with a bounded queue, the one in edge-api: `concurrency` holders run,
// up to `queueLimit` more wait their turn in fair order (fair-queue.ts: round robin between
// the clients waiting, the caller says whose each holder is), and beyond it the
// heaviest waiting client is refused first, with the caller's error (a 429 when that client
// was over its share, a 503 + Retry-After when the replica itself is full). The chain client's
// reads (chain/read-front.ts) and the optional verify routes (http/route-group-limit.ts) are
// bounded by it.

export interface BoundedLimitOptions {
  readonly concurrency: number
  readonly queueLimit: number
  /** The error a holder beyond the queue is refused with; `overShare` when its client was over its share of the queue. */
  readonly busy: (overShare: boolean) => Error
}

/** Gives back a slot; calling it again does nothing. */
export type Release = () => void

export class BoundedLimit {
  readonly #concurrency: number
  readonly #queueLimit: number
  readonly #busy: (overShare: boolean) => Error
  readonly #waiting: FairQueue<(release: Release) => void>
  #active = 0

  constructor (options: BoundedLimitOptions) {
    this.#concurrency = options.concurrency
    this.#queueLimit = options.queueLimit
    this.#busy = options.busy
    this.#waiting = new FairQueue(options.queueLimit)
  }

  /** Resolves with the slot's release once `client`'s holder may run; rejects with `busy()` when it is refused a place in the queue. */
  enter (client: string): Promise<Release> {
    if (this.#active < this.#concurrency) {
      this.#active++
      return Promise.resolve(this.#release())
    }
    return new Promise((resolve, reject) => {
      const refuse = (refusal: Refusal): void => reject(this.#busy(refusal.overShare))
      this.#waiting.push(client, resolve, refuse)
    })
  }

  /** Runs `client`'s `work` once it has a slot, and gives the slot back when it settles. */
  async run<T> (client: string, work: () => Promise<T>): Promise<T> {
    const release = await this.enter(client)
    try {
      return await work()
    } finally {
      release()
    }
  }

  /** Holders running now. */
  get active (): number {
    return this.#active
  }

  /** Holders waiting for a slot. */
  get queued (): number {
    return this.#waiting.size
  }

  /** How many may wait. */
  get queueLimit (): number {
    return this.#queueLimit
  }

  #release (): Release {
    let released = false
    return () => {
      if (released) return
      released = true
      // The slot passes straight to the next holder in fair order.
      const next = this.#waiting.shift()
      if (next !== undefined) next(this.#release())
      else this.#active--
    }
  }
}
