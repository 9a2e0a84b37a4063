import type { DropReport } from './drop-report.js'
import type { SpanRecord } from './span-records.js'

/** What the queue needs of an OTLP export delegate (exporter.ts): the SDK's, with our serializer. */
export interface SpanExporter {
  /** Sends `spans`; `done` hears how it went (code 0 success, anything else failure). */
  export (spans: SpanRecord[], done: (result: { code: number, error?: Error }) => void): void
  /** Waits for the exports in flight, then closes the transport. */
  shutdown (): Promise<void>
}

export interface SpanQueueOptions {
  readonly exporter: SpanExporter
  readonly maxQueueSize: number
  readonly maxExportBatchSize: number
  readonly scheduleDelayMs: number
  readonly exportTimeoutMs: number
  readonly drops: DropReport
}

/**
 * The batch span processor of the OTEL_BSP_* settings, as the SDK's BatchSpanProcessor
 * behaves, over our span records: spans wait in a bounded queue, a full one drops (counted);
 * a batch goes out when maxExportBatchSize are waiting or scheduleDelayMs after the first,
 * one export at a time, never on a request's path (from a timer or setImmediate). An export
 * not answered within exportTimeoutMs frees the queue for the next batch (the exporter's own
 * timeout and exportsInFlight bound what it still holds); failed ones are counted.
 */
export class SpanQueue {
  readonly #exporter: SpanExporter
  readonly #maxQueueSize: number
  readonly #batchSize: number
  readonly #delayMs: number
  readonly #timeoutMs: number
  readonly #drops: DropReport
  #spans: SpanRecord[] = []
  #timer: NodeJS.Timeout | undefined
  #immediate: NodeJS.Immediate | undefined
  #exporting = false
  #shutdown: Promise<boolean> | undefined

  constructor (options: SpanQueueOptions) {
    this.#exporter = options.exporter
    this.#maxQueueSize = options.maxQueueSize
    this.#batchSize = options.maxExportBatchSize
    this.#delayMs = options.scheduleDelayMs
    this.#timeoutMs = options.exportTimeoutMs
    this.#drops = options.drops
  }

  /** Spans waiting to be exported (never more than maxQueueSize). */
  get queued (): number {
    return this.#spans.length
  }

  /** Queues an ended, sampled span; dropped (counted) when the queue is full, ignored after shutdown. */
  add (span: SpanRecord): void {
    if (this.#shutdown !== undefined) return
    if (this.#spans.length >= this.#maxQueueSize) {
      this.#drops.dropped('queue_full', 1)
      return
    }
    this.#spans.push(span)
    this.#schedule()
  }

  /** Exports everything queued at once, a batch per export; resolves when each was answered or timed out: true when every one succeeded. */
  async forceFlush (): Promise<boolean> {
    this.#clearTimers()
    const sends: Array<Promise<boolean>> = []
    while (this.#spans.length > 0) sends.push(this.#send(this.#take()))
    return (await Promise.all(sends)).every((sent) => sent)
  }

  /** Stops queueing, flushes, and waits for every export still in flight: true when the flush's exports all succeeded. Once: later calls share the first. */
  shutdown (): Promise<boolean> {
    this.#shutdown ??= this.forceFlush().then(async (flushed) => {
      await this.#exporter.shutdown()
      return flushed
    })
    return this.#shutdown
  }

  #schedule (): void {
    if (this.#exporting) return
    if (this.#spans.length >= this.#batchSize) {
      // A full batch goes out next, after the request whose span filled it.
      this.#immediate ??= setImmediate(() => {
        this.#immediate = undefined
        this.#exportNext()
      })
      return
    }
    if (this.#timer !== undefined) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      this.#exportNext()
    }, this.#delayMs)
    this.#timer.unref()
  }

  #exportNext (): void {
    this.#clearTimers()
    // #schedule sets no timer while an export runs, and nothing is queued after shutdown:
    // the last two are the one-export-at-a-time rule kept where it is relied on.
    /* c8 ignore next */
    if (this.#spans.length === 0 || this.#exporting || this.#shutdown !== undefined) return
    this.#exporting = true
    // #send never rejects: a failure is counted and the queue moves on.
    this.#send(this.#take()).then(() => {
      this.#exporting = false
      if (this.#spans.length > 0) this.#schedule()
    }, () => {})
  }

  #take (): SpanRecord[] {
    if (this.#spans.length <= this.#batchSize) {
      const batch = this.#spans
      this.#spans = []
      return batch
    }
    return this.#spans.splice(0, this.#batchSize)
  }

  /** Resolves when the export is answered (true on success) or its time is up (false); a failure is counted whenever it comes. */
  async #send (batch: SpanRecord[]): Promise<boolean> {
    return await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), this.#timeoutMs)
      this.#exporter.export(batch, (result) => {
        clearTimeout(timer)
        if (result.code !== 0) this.#drops.dropped('export_failed', batch.length, result.error)
        resolve(result.code === 0)
      })
    })
  }

  #clearTimers (): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    clearImmediate(this.#immediate)
    this.#immediate = undefined
  }
}
