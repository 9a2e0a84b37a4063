import type { SpanExporter } from '@opentelemetry/sdk-trace-base'
import type { TracingSettings } from './settings.js'

/**
 * How many exports may be in flight at once. Each pins its batch until the collector
 * answers or the export times out, and the batch processor starts the next batch when its own
 * OTEL_BSP_EXPORT_TIMEOUT passes, whether or not the last one ended. The exporter's default
 * limit (30) would let a hanging collector hold 30 batches; beyond the bound an export fails at
 * once and its spans are counted lost (export_failed).
 */
export function exportsInFlight (batch: TracingSettings['batch']): number {
  // The flush at exit sends the whole queue at once, one export per batch, beside the one
  // that may still be in flight: none of those may be refused.
  return Math.ceil(batch.maxQueueSize / batch.maxExportBatchSize) + 1
}

/**
 * The OTLP exporter of the configured protocol, each loaded only when chosen (the gRPC one
 * brings @grpc/grpc-js). Endpoint, headers and timeout are ours (settings.ts); compression,
 * certificates and gRPC's OTEL_EXPORTER_OTLP_INSECURE are left to the exporter's own reading
 * of the standard variables, as Go left them to its SDK. Exports in flight: exportsInFlight.
 */
export async function createExporter (settings: TracingSettings): Promise<SpanExporter> {
  const { endpoint: url, headers, exportTimeoutMs: timeoutMillis } = settings
  const concurrencyLimit = exportsInFlight(settings.batch)
  if (settings.protocol === 'grpc') {
    const [{ OTLPTraceExporter }, { Metadata }] = await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-grpc'),
      import('@grpc/grpc-js')
    ])
    // The gRPC exporter takes headers only as metadata.
    const metadata = new Metadata()
    for (const [key, value] of Object.entries(headers)) metadata.set(key, value)
    return new OTLPTraceExporter({ url, metadata, timeoutMillis, concurrencyLimit })
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto')
  return new OTLPTraceExporter({ url, headers: { ...headers }, timeoutMillis, concurrencyLimit })
}
