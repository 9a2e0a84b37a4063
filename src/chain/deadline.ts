import { KEEPS_ALIVE, type Clock } from '../clock.js'
import { ChainTimeoutError } from '../errors.js'

/** A chain request's budget: the signal that aborts it (at its deadline, or abortAll) and whether it ran out of time. */
export interface Deadline {
  readonly signal: AbortSignal
  readonly timeoutMs: number
  /** Whether the signal was aborted because the budget ran out (not by abortAll). */
  timedOut (): boolean
}

/**
 * The deadlines of the chain requests in flight: each runs under an abortable budget of its
 * own, and abortAll (forced shutdown) reaches every one still running.
 */
export class Deadlines {
  readonly #running = new Set<AbortController>()
  readonly #clock: Clock

  /** `clock`: what the budgets run out on (the chain client's). */
  constructor (clock: Clock) {
    this.#clock = clock
  }

  /** Runs `work` under a deadline of `timeoutMs`; its signal aborts with ChainTimeoutError when it runs out. */
  async run<T> (timeoutMs: number, work: (deadline: Deadline) => Promise<T>): Promise<T> {
    const controller = new AbortController()
    let timedOut = false
    // A request is waiting on it: it keeps the process alive, as the request's socket does.
    const cancel = this.#clock.after(timeoutMs, () => {
      timedOut = true
      controller.abort(new ChainTimeoutError(timeoutMs))
    }, KEEPS_ALIVE)
    this.#running.add(controller)
    try {
      return await work({ signal: controller.signal, timeoutMs, timedOut: () => timedOut })
    } finally {
      cancel()
      this.#running.delete(controller)
    }
  }

  /** Chain requests currently running. */
  get size (): number {
    return this.#running.size
  }

  /** Aborts every chain request running (forced shutdown); their callers get 503. */
  abortAll (): void {
    for (const controller of this.#running) controller.abort(new Error('edge-api is shutting down'))
  }
}
