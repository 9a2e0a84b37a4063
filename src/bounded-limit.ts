// A concurrency limit with a bounded queue, the one in edge-api: `concurrency` holders run,
// up to `queueLimit` more wait their turn in arrival order, and the next one is refused at
// once with the caller's error (a 503 + Retry-After, counted as shed load). The chain
// client's reads (chain/read-front.ts) and the optional verify routes (http/route-group-limit.ts)
// are bounded by it.

export interface BoundedLimitOptions {
  readonly concurrency: number
  readonly queueLimit: number
  /** The error a holder beyond the queue is refused with. */
  readonly busy: () => Error
}

/** Gives back a slot; calling it again does nothing. */
export type Release = () => void

export class BoundedLimit {
  readonly #concurrency: number
  readonly #queueLimit: number
  readonly #busy: () => Error
  readonly #waiting: Array<(release: Release) => void> = []
  #active = 0

  constructor (options: BoundedLimitOptions) {
    this.#concurrency = options.concurrency
    this.#queueLimit = options.queueLimit
    this.#busy = options.busy
  }

  /** Resolves with the slot's release once the holder may run; rejects with `busy()` when the queue is full. */
  enter (): Promise<Release> {
    if (this.#active < this.#concurrency) {
      this.#active++
      return Promise.resolve(this.#release())
    }
    if (this.#waiting.length >= this.#queueLimit) {
      return Promise.reject(this.#busy())
    }
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  /** Runs `work` once it has a slot, and gives the slot back when it settles. */
  async run<T> (work: () => Promise<T>): Promise<T> {
    const release = await this.enter()
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
    return this.#waiting.length
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
      // The slot passes straight to the longest-waiting holder.
      const next = this.#waiting.shift()
      if (next !== undefined) next(this.#release())
      else this.#active--
    }
  }
}
