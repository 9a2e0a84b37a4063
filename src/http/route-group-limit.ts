import { NamedError } from '../named-error.js'

// A concurrency limit with a bounded queue for a group of CPU-heavy routes: `concurrency`
// requests run, up to `queueLimit` more wait their turn in arrival order, and the next one
// is refused at once with 503 + Retry-After, counted as shed load. A slot is taken once the
// request's body has arrived and held until its response is written or its client leaves (chain reads,
// verification), so the group can never take more than its share of the process, however
// many clients ask at once, and a slow upload never holds one.

export interface RouteGroupLimitOptions {
  readonly concurrency: number
  readonly queueLimit: number
  /** The 503 message for a request beyond the queue. */
  readonly busyMessage: string
}

/** A request beyond the group's queue: app.ts answers it 503 + Retry-After as shed load (`groupQueue`). */
export class RouteGroupBusyError extends NamedError {}

/** Gives back a slot; calling it again does nothing. */
export type Release = () => void

export class RouteGroupLimit {
  readonly #concurrency: number
  readonly #queueLimit: number
  readonly #busyMessage: string
  readonly #waiting: Array<(release: Release) => void> = []
  #active = 0

  constructor (options: RouteGroupLimitOptions) {
    this.#concurrency = options.concurrency
    this.#queueLimit = options.queueLimit
    this.#busyMessage = options.busyMessage
  }

  /** Resolves with the slot's release once the request may run; rejects with 503 when the queue is full. */
  enter (): Promise<Release> {
    if (this.#active < this.#concurrency) {
      this.#active++
      return Promise.resolve(this.#release())
    }
    if (this.#waiting.length >= this.#queueLimit) {
      return Promise.reject(new RouteGroupBusyError(this.#busyMessage))
    }
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  /** Requests running now. */
  get active (): number {
    return this.#active
  }

  /** Requests waiting for a slot. */
  get queued (): number {
    return this.#waiting.length
  }

  #release (): Release {
    let released = false
    return () => {
      if (released) return
      released = true
      // The slot passes straight to the longest-waiting request.
      const next = this.#waiting.shift()
      if (next !== undefined) next(this.#release())
      else this.#active--
    }
  }
}
