import { readFileSync } from 'node:fs'
import type { FastifyBaseLogger, FastifyTypeProvider } from 'fastify'
import type { ChainTracer } from '../chain/client.js'
import { ChainSpans } from './chain-spans.js'
import { type DropLog, type DropReason, DropReport } from './drop-report.js'
import { createExporter } from './exporter.js'
import { createSampler } from './sampler.js'
import { type ServerSpanHooks, ServerSpans, type TracedApp } from './server-spans.js'
import type { TracingSettings } from './settings.js'
import { SpanQueue } from './span-queue.js'

// Tracing's own pipeline: sampling decided once per request before any span (sampler.ts),
// plain span records (span-records.ts), a bounded batch queue (span-queue.ts), and our OTLP
// serializer handed to the SDK's export transport (exporter.ts). Nothing global: no tracer
// provider, context manager or propagator, so several services in one process (tests, the
// bench) never share one. Why not the SDK's span and processor: docs/tracing.md, Cost.

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

// Read once at load: dist/tracing/ and src/tracing/ both sit two levels below package.json.
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

export async function createTracing (settings: TracingSettings, options: TracingOptions): Promise<Tracing> {
  const drops = new DropReport(options.log, options.onDrop)
  const resource = { 'service.version': PACKAGE_VERSION, ...settings.resource }
  const queue = new SpanQueue({ exporter: await createExporter(settings, resource, PACKAGE_VERSION), ...settings.batch, drops })
  const server = new ServerSpans(createSampler(settings.sampler, settings.samplerRatio), queue)
  const chain = new ChainSpans(server, queue)
  let shutdown: Promise<boolean> | undefined
  return {
    chain,
    register: (app, hooks) => server.register(app, hooks),
    get queued () {
      return queue.queued
    },
    shutdown (budgetMs) {
      shutdown ??= flushWithin(queue, budgetMs).finally(() => drops.close())
      return shutdown
    }
  }
}

/** Sends what is queued and stops, within `budgetMs`: true when everything went out in time. */
async function flushWithin (queue: SpanQueue, budgetMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), budgetMs) })
  try {
    return await Promise.race([queue.shutdown().catch(() => false), late])
  } finally {
    clearTimeout(timer)
  }
}
