import type { Context } from '@opentelemetry/api'
import { ExportResultCode, type ExportResult } from '@opentelemetry/core'
import { BatchSpanProcessor, type ReadableSpan, type Span, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { DropReport } from './drop-report.js'

export interface SpanQueueOptions {
  readonly exporter: SpanExporter
  readonly maxQueueSize: number
  readonly maxExportBatchSize: number
  readonly scheduleDelayMs: number
  readonly exportTimeoutMs: number
  readonly drops: DropReport
}

/**
 * The SDK's BatchSpanProcessor (exports in the background, one batch at a time, never on a
 * request's path), with its losses counted: the SDK drops a span silently when its queue is
 * full. This processor keeps the same count the SDK's queue has (spans handed over, minus the
 * spans the SDK hands to the exporter, which it takes off its queue in the same tick) and
 * drops, counted, the span the SDK would have dropped. Failed exports are counted too.
 */
export class SpanQueue implements SpanProcessor {
  readonly #batch: BatchSpanProcessor
  readonly #maxQueueSize: number
  readonly #drops: DropReport
  #queued = 0

  constructor (options: SpanQueueOptions) {
    this.#maxQueueSize = options.maxQueueSize
    this.#drops = options.drops
    const inner = options.exporter
    const exporter: SpanExporter = {
      export: (spans, done) => {
        this.#queued -= spans.length
        inner.export(spans, (result: ExportResult) => {
          if (result.code !== ExportResultCode.SUCCESS) this.#drops.dropped('export_failed', spans.length, result.error)
          done(result)
        })
      },
      // No forceFlush: the SDK's batch processor never asks its exporter for one.
      shutdown: () => inner.shutdown()
    }
    this.#batch = new BatchSpanProcessor(exporter, {
      maxQueueSize: options.maxQueueSize,
      maxExportBatchSize: options.maxExportBatchSize,
      scheduledDelayMillis: options.scheduleDelayMs,
      exportTimeoutMillis: options.exportTimeoutMs
    })
  }

  /** Spans waiting to be exported (never more than maxQueueSize). */
  get queued (): number {
    return this.#queued
  }

  onStart (span: Span, parentContext: Context): void {
    this.#batch.onStart(span, parentContext)
  }

  onEnd (span: ReadableSpan): void {
    // Unsampled spans never queue (the SDK skips them too).
    if ((span.spanContext().traceFlags & 1) === 0) return
    if (this.#queued >= this.#maxQueueSize) {
      this.#drops.dropped('queue_full', 1)
      return
    }
    this.#queued++
    this.#batch.onEnd(span)
  }

  forceFlush (): Promise<void> {
    return this.#batch.forceFlush()
  }

  shutdown (): Promise<void> {
    return this.#batch.shutdown()
  }
}
