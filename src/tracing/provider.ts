import { readFileSync } from 'node:fs'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler
} from '@opentelemetry/sdk-trace-base'
import { ChainSpans } from './chain-spans.js'
import { DropReport } from './drop-report.js'
import { createExporter } from './exporter.js'
import { ServerSpans } from './server-spans.js'
import type { SamplerName, TracingSettings } from './settings.js'
import { SpanQueue } from './span-queue.js'
import type { Tracing, TracingOptions } from './tracing.js'

// The OpenTelemetry SDK, wired explicitly from our settings (the SDK reads no variable we
// parse), and nothing global: no global tracer provider, context manager or propagator, so
// several services in one process (tests, the bench) never share one.

// Read once at load: dist/tracing/ and src/tracing/ both sit two levels below package.json.
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

export async function createTracing (settings: TracingSettings, options: TracingOptions): Promise<Tracing> {
  const drops = new DropReport(options.log, options.onDrop)
  const queue = new SpanQueue({ exporter: await createExporter(settings), ...settings.batch, drops })
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.version': PACKAGE_VERSION, ...settings.resource }),
    sampler: createSampler(settings.sampler, settings.samplerRatio),
    spanProcessors: [queue]
  })
  // Go's propagation: W3C trace context only (traceparent, tracestate), no baggage.
  const propagator = new W3CTraceContextPropagator()
  const server = new ServerSpans(provider.getTracer('edge-api.server', PACKAGE_VERSION), propagator)
  const chain = new ChainSpans(provider.getTracer('edge-api.chain', PACKAGE_VERSION), propagator, server)
  let shutdown: Promise<boolean> | undefined
  return {
    chain,
    register: (app, hooks) => server.register(app, hooks),
    get queued () {
      return queue.queued
    },
    shutdown (budgetMs) {
      shutdown ??= flushWithin(provider, budgetMs).finally(() => drops.close())
      return shutdown
    }
  }
}

/** Sends what is queued and stops, within `budgetMs`: true when everything went out in time. */
async function flushWithin (provider: BasicTracerProvider, budgetMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), budgetMs) })
  try {
    return await Promise.race([provider.shutdown().then(() => true, () => false), late])
  } finally {
    clearTimeout(timer)
  }
}

function createSampler (name: SamplerName, ratio: number): Sampler {
  switch (name) {
    case 'always_on': return new AlwaysOnSampler()
    case 'always_off': return new AlwaysOffSampler()
    case 'traceidratio': return new TraceIdRatioBasedSampler(ratio)
    case 'parentbased_always_on': return new ParentBasedSampler({ root: new AlwaysOnSampler() })
    case 'parentbased_always_off': return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio': return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) })
  }
}
