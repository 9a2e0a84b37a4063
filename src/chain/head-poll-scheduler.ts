import type { Clock } from '../clock.js'
import type { PollOutcome } from './heights-state.js'
import type { ChainTrace } from './types.js'

// When the head poll runs (docs/heights-and-cache.md): one round at a time, shared by whoever
// asks meanwhile; in the background at most once per interval.

export interface HeadPollSchedulerOptions {
  /** One round of the poll (every node asked once): told when a node told its height. Never rejects. */
  readonly poll: (trace: ChainTrace | undefined) => Promise<PollOutcome>
  /** Told each round's outcome (after its retry, if any). */
  readonly onRound: (outcome: PollOutcome) => void
  /** The least time between two background rounds (half of EDGE_API_HEAD_MAX_AGE). */
  readonly intervalMs: number
  /**
   * A silent round that ended sooner than this is asked once more at once: a poll can lose a
   * race with a keep-alive connection the node is closing ("other side closed", seen under
   * load). One that took longer (a hanging node) is not: a second would hang as long.
   */
  readonly retryWithinMs: number
  readonly clock: Clock
}

/** The head poll's rounds: single flight, background ones spaced by intervalMs. */
export class HeadPollScheduler {
  readonly #options: HeadPollSchedulerOptions
  #round: Promise<PollOutcome> | undefined
  #startedAt = -Infinity

  constructor (options: HeadPollSchedulerOptions) {
    this.#options = options
  }

  /** A round now, or the one in flight (traced as `trace`'s request's when it starts one); never rejects. */
  round (trace: ChainTrace | undefined): Promise<PollOutcome> {
    this.#round ??= this.#run(trace).finally(() => { this.#round = undefined })
    return this.#round
  }

  /** A round started after the one in flight (which may have asked before a new block existed). */
  next (trace: ChainTrace | undefined): Promise<PollOutcome> {
    const current = this.#round
    // Decided now, not after a turn: a second caller at once follows the round the first started.
    if (current === undefined) return this.round(trace)
    return current.then(async () => this.round(trace))
  }

  /** A round no read waits for, unless one is in flight or one started within intervalMs. */
  background (): void {
    if (this.#round !== undefined || this.#options.clock.now() - this.#startedAt < this.#options.intervalMs) return
    this.round(undefined)
  }

  async #run (trace: ChainTrace | undefined): Promise<PollOutcome> {
    const { poll, clock, retryWithinMs, onRound } = this.#options
    this.#startedAt = clock.now()
    let outcome = await poll(trace)
    if (outcome === 'silent' && clock.now() - this.#startedAt < retryWithinMs) outcome = await poll(trace)
    onRound(outcome)
    return outcome
  }
}
