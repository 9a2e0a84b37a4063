import type { ChainTracer } from '../chain/client.js'
import type { DropLog, DropReason } from './drop-report.js'
import type { FastifyBaseLogger, FastifyTypeProvider } from 'fastify'
import type { ServerSpanHooks, TracedApp } from './server-spans.js'
import type { TracingSettings } from './settings.js'

// The one door to tracing. With tracing off nothing of OpenTelemetry is loaded: the SDK and
// the exporter are imported here, on demand, only when the settings turn tracing on.

export interface TracingOptions {
  /** Where dropped spans and failed exports are logged (at most once a minute). */
  readonly log: DropLog
  /** Told of every span lost (the metrics' edge_api_trace_spans_dropped_total). */
  readonly onDrop?: ((reason: DropReason, spans: number) => void) | undefined
}

/** A running tracer: the app's hooks, the chain client's seam, and the flush at exit. */
export interface Tracing {
  /** Adds the server span hooks to the app (app.ts). */
  register<Logger extends FastifyBaseLogger, Provider extends FastifyTypeProvider> (app: TracedApp<Logger, Provider>, hooks: ServerSpanHooks): void
  /** Traces the chain client's exchanges. */
  readonly chain: ChainTracer
  /** Spans waiting for export; the queue's bound (OTEL_BSP_MAX_QUEUE_SIZE) caps it. */
  readonly queued: number
  /** Sends the pending spans and stops, within `budgetMs`; true when all went out in time. Once: later calls share the first. */
  shutdown (budgetMs: number): Promise<boolean>
}

/** How long the exit waits for the pending spans, after the drain (Go waited up to 10 s). */
export const FLUSH_BUDGET_MS = 5000

/** Starts tracing with `settings`, or does nothing (and loads nothing) when they are undefined (off). */
export async function startTracing (settings: TracingSettings | undefined, options: TracingOptions): Promise<Tracing | undefined> {
  if (settings === undefined) return undefined
  const { createTracing } = await import('./provider.js')
  return await createTracing(settings, options)
}
