import { OtlpTraceSerializer } from './otlp-serializer.js'
import type { TracingSettings } from './settings.js'
import type { SpanExporter } from './span-queue.js'
import type { SpanRecord } from './span-records.js'

/**
 * How many exports may be in flight at once. Each pins its batch until the collector
 * answers or the export times out, and the queue starts the next batch when its own
 * OTEL_BSP_EXPORT_TIMEOUT passes, whether or not the last one ended. The delegate's default
 * limit (30) would let a hanging collector hold 30 batches; beyond the bound an export fails at
 * once and its spans are counted lost (export_failed).
 */
export function exportsInFlight (batch: TracingSettings['batch']): number {
  // The flush at exit sends the whole queue at once, one export per batch, beside the one
  // that may still be in flight: none of those may be refused.
  return Math.ceil(batch.maxQueueSize / batch.maxExportBatchSize) + 1
}

/** The SDK's own exporter metrics (otel.sdk.exporter.*) count a batch's spans so; no meter provider is given, so they stay no-ops. */
const METRICS_HELPER = { name: 'span' as const, countItems: (spans: SpanRecord[]) => spans.length }

/**
 * The OTLP export of the configured protocol: the SDK's transport (its export delegate, as
 * its OTLPTraceExporter classes build it: retries, timeouts, the concurrency bound, gRPC
 * metadata and credentials, compression) with our serializer over our span records
 * (otlp-serializer.ts). Each protocol's transport is loaded only when chosen (gRPC brings
 * @grpc/grpc-js). Endpoint, headers and timeout are ours (settings.ts); compression,
 * certificates and gRPC's OTEL_EXPORTER_OTLP_INSECURE are left to the SDK's own reading of
 * the standard variables, as Go left them to its SDK. Exports in flight: exportsInFlight.
 */
export async function createExporter (settings: TracingSettings, resource: Readonly<Record<string, string>>, scopeVersion: string): Promise<SpanExporter> {
  const { endpoint: url, headers, exportTimeoutMs: timeoutMillis } = settings
  const concurrencyLimit = exportsInFlight(settings.batch)
  const serializer = new OtlpTraceSerializer(resource, scopeVersion)
  if (settings.protocol === 'grpc') {
    const [{ convertLegacyOtlpGrpcOptions, createOtlpGrpcExportDelegate }, { Metadata }] = await Promise.all([
      import('@opentelemetry/otlp-grpc-exporter-base'),
      import('@grpc/grpc-js')
    ])
    // The gRPC transport takes headers only as metadata.
    const metadata = new Metadata()
    for (const [key, value] of Object.entries(headers)) metadata.set(key, value)
    // The component type and service the SDK's OTLP/gRPC trace exporter names.
    return createOtlpGrpcExportDelegate(convertLegacyOtlpGrpcOptions({ url, metadata, timeoutMillis, concurrencyLimit }, 'TRACES'),
      serializer, 'otlp_grpc_span_exporter', METRICS_HELPER, undefined,
      'TraceExportService', '/opentelemetry.proto.collector.trace.v1.TraceService/Export')
  }
  const { convertLegacyHttpOptions, createOtlpHttpExportDelegate } = await import('@opentelemetry/otlp-exporter-base/node-http')
  return createOtlpHttpExportDelegate(convertLegacyHttpOptions({ url, headers: { ...headers }, timeoutMillis, concurrencyLimit }, 'TRACES', 'v1/traces', {
    'Content-Type': 'application/x-protobuf'
  }), serializer, 'otlp_http_span_exporter', METRICS_HELPER, undefined)
}
