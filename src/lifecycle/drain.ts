import { KEEPS_ALIVE, REAL_CLOCK, type Clock } from '../clock.js'
import { formatDuration } from '../duration.js'

/**
 * The drain's states, in order. serving → announcing (latched, still serving) → closing
 * (listener closed, in-flight requests finishing) → stopped; or → forcing → stopped when
 * the budget expires or a second signal arrives.
 */
export type DrainState = 'serving' | 'announcing' | 'closing' | 'forcing' | 'stopped'

/** What the drain drives: the HTTP server, readiness and the chain client (see http-target.ts). */
export interface DrainTarget {
  /** Latches readiness to draining; from now on responses carry Connection: close. */
  beginDrain (): void
  /**
   * Stops accepting connections and closes idle ones. `listenerClosed` resolves once the
   * listener is closed; `finished` once the last accepted request has been answered.
   */
  close (): { readonly listenerClosed: Promise<void>, readonly finished: Promise<void> }
  /** Aborts in-flight chain requests and destroys every remaining socket. */
  forceClose (): void
}

/** The subset of a pino logger the drain writes to. */
export interface DrainLog {
  info (fields: object, msg: string): void
  warn (fields: object, msg: string): void
  error (fields: object, msg: string): void
}

export interface DrainOptions {
  readonly announceMs: number
  readonly budgetMs: number
  readonly target: DrainTarget
  readonly log: DrainLog
  /** The windows' timers and the durations logged. @default REAL_CLOCK */
  readonly clock?: Clock
}

/** How the drain ended: exit 0 when every accepted request was answered, 1 when forced. */
export interface DrainOutcome {
  readonly code: 0 | 1
  /** Why it was forced; absent for a clean drain. */
  readonly reason?: string
  /** From the first signal to the outcome. */
  readonly shutdownMs: number
}

/**
 * Owns the shutdown: one state, one absolute deadline, one outcome.
 *
 * Every event (signal, window end, budget expiry, completion) runs on the one JS thread and
 * first checks the state, so completion and escalation cannot both win: once the outcome is
 * settled, whatever arrives later is ignored. The budget is its own timer, armed when the
 * listener closes; it does not wait for the target's close() to cooperate.
 */
export class Drain {
  readonly #announceMs: number
  readonly #budgetMs: number
  readonly #target: DrainTarget
  readonly #log: DrainLog
  readonly #clock: Clock
  #state: DrainState = 'serving'
  #signalAt = 0
  #closeAt = 0
  /** Cancels the pending window's timer (the announcement's, then the budget's): set on entering either state. */
  #cancelTimer!: () => void
  #settle!: (outcome: DrainOutcome) => void
  /** Resolves once, with the exit code main.ts uses. */
  readonly outcome: Promise<DrainOutcome>

  constructor (options: DrainOptions) {
    this.#announceMs = options.announceMs
    this.#budgetMs = options.budgetMs
    this.#target = options.target
    this.#log = options.log
    this.#clock = options.clock ?? REAL_CLOCK
    this.outcome = new Promise((resolve) => { this.#settle = resolve })
  }

  get state (): DrainState {
    return this.#state
  }

  /** A SIGTERM/SIGINT: the first starts the drain, any later one forces the close at once. */
  signal (name: string): void {
    switch (this.#state) {
      case 'serving':
        this.#begin(name)
        return
      case 'announcing':
        this.#force(`operator sent ${name} during drain announcement`)
        return
      case 'closing':
        this.#force(`operator sent ${name} during shutdown`)
        return
      default:
        // forcing/stopped: the outcome is already decided; nothing can change it.
        this.#log.info({ signal: name, state: this.#state }, 'signal ignored: already stopping')
    }
  }

  #begin (signal: string): void {
    this.#state = 'announcing'
    this.#signalAt = this.#clock.now()
    this.#log.info({ signal, announce: formatDuration(this.#announceMs), budget: formatDuration(this.#budgetMs) }, 'shutdown signal')
    this.#target.beginDrain()
    if (this.#announceMs <= 0) {
      // 0 declares that no balancer is in front: nobody needs to observe /readyz first.
      this.#close()
      return
    }
    this.#log.info({ announce: formatDuration(this.#announceMs), announceMs: this.#announceMs }, 'announcing drain')
    this.#cancelTimer = this.#clock.after(this.#announceMs, () => this.#close(), KEEPS_ALIVE)
  }

  #close (): void {
    /* c8 ignore next */ // the announce timer is cleared on every way out of 'announcing'
    if (this.#state !== 'announcing') return
    this.#state = 'closing'
    this.#closeAt = this.#clock.now()
    // Armed before close() is called: the budget is absolute, whatever close() does.
    const budget = formatDuration(this.#budgetMs)
    this.#cancelTimer = this.#clock.after(this.#budgetMs, () => this.#force(`shutdown budget ${budget} expired`), KEEPS_ALIVE)
    let closing: ReturnType<DrainTarget['close']>
    try {
      closing = this.#target.close()
    } catch (err) {
      this.#force(`shutdown failed: ${(err as Error).message}`)
      return
    }
    // "drained" is only ever logged after "listener closed", even when nothing was in flight.
    closing.listenerClosed.then(() => {
      if (this.#state === 'closing') {
        this.#log.info({ announcedMs: Math.round(this.#closeAt - this.#signalAt), budget, budgetMs: this.#budgetMs }, 'listener closed')
      }
      return closing.finished
    }).then(() => this.#complete(), (err: Error) => this.#force(`shutdown failed: ${err.message}`))
  }

  #complete (): void {
    if (this.#state !== 'closing') return
    this.#cancelTimer()
    this.#state = 'stopped'
    const now = this.#clock.now()
    this.#log.info({ drainMs: Math.round(now - this.#closeAt), shutdownMs: Math.round(now - this.#signalAt) }, 'drained')
    this.#settle({ code: 0, shutdownMs: now - this.#signalAt })
  }

  #force (reason: string): void {
    /* c8 ignore next */ // callers only force from announcing/closing; kept as the one-outcome guard
    if (this.#state !== 'announcing' && this.#state !== 'closing') return
    this.#cancelTimer()
    this.#state = 'forcing'
    const now = this.#clock.now()
    this.#log.warn({ reason, shutdownMs: Math.round(now - this.#signalAt) }, 'closing remaining connections')
    try {
      this.#target.forceClose()
    } catch (err) {
      this.#log.error({ err }, 'forced close failed')
    }
    this.#state = 'stopped'
    this.#settle({ code: 1, reason, shutdownMs: this.#clock.now() - this.#signalAt })
  }
}
