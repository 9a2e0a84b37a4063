// Spans that never reach the collector: counted at once (a metric), logged at most once per
// interval. A collector that is down loses spans by the thousand; one line a minute says so.

/** Why spans never reached the collector: its queue was full (the collector is slow or down), or it refused a batch. */
export const DROP_REASONS = ['queue_full', 'export_failed'] as const
export type DropReason = typeof DROP_REASONS[number]

/** The subset of a pino logger the report writes to. */
export interface DropLog {
  warn (fields: object, msg: string): void
}

export const DROP_LOG_INTERVAL_MS = 60_000

export class DropReport {
  readonly #log: DropLog
  readonly #count: ((reason: DropReason, spans: number) => void) | undefined
  readonly #intervalMs: number
  #period: Record<DropReason, number> = { queue_full: 0, export_failed: 0 }
  #lastError: string | undefined
  #timer: NodeJS.Timeout | undefined

  /** `count` hears of every loss (the metrics' edge_api_trace_spans_dropped_total). */
  constructor (log: DropLog, count?: (reason: DropReason, spans: number) => void, intervalMs = DROP_LOG_INTERVAL_MS) {
    this.#log = log
    this.#count = count
    this.#intervalMs = intervalMs
  }

  /** `spans` were lost; `error` is why an export failed (its message is logged, never a header). */
  dropped (reason: DropReason, spans: number, error?: Error): void {
    this.#count?.(reason, spans)
    this.#period[reason] += spans
    if (error !== undefined) this.#lastError = error.message
    if (this.#timer === undefined) {
      // The first loss of a quiet period is logged at once; the rest of the period is summed up.
      this.flush()
      this.#timer = setTimeout(() => {
        this.#timer = undefined
        this.flush()
      }, this.#intervalMs)
      this.#timer.unref()
    }
  }

  /** Logs the losses not logged yet, if any (also at exit). */
  flush (): void {
    const { queue_full: queueFull, export_failed: exportFailed } = this.#period
    if (queueFull === 0 && exportFailed === 0) return
    this.#log.warn({ queueFull, exportFailed, error: this.#lastError }, 'trace spans dropped')
    this.#period = { queue_full: 0, export_failed: 0 }
    this.#lastError = undefined
  }

  /** Stops the interval's timer after a last flush. */
  close (): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.flush()
  }
}
