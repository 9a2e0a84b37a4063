import type { Release } from '../bounded-limit.js'

// A bound on the bytes a group of routes holds at once, for memory rather than CPU: POST
// /v1/verify-block bodies (up to 32 MiB each) are held from the moment they have arrived
// until the worker thread has parsed them, queueing for a verification slot included. A body
// that does not fit is refused at once (503), so the queue can never hold more than the
// budget, however many clients post at once.

export class ByteBudget {
  readonly #limit: number
  #held = 0

  constructor (limit: number) {
    this.#limit = limit
  }

  /** The release of `bytes` held, or undefined when they do not fit. */
  take (bytes: number): Release | undefined {
    if (this.#held + bytes > this.#limit) return undefined
    this.#held += bytes
    let released = false
    return () => {
      if (released) return
      released = true
      this.#held -= bytes
    }
  }
}
