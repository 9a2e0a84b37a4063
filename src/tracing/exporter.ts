import type { SpanExporter } from '@opentelemetry/sdk-trace-base'
import type { TracingSettings } from './settings.js'

/**
 * The OTLP exporter of the configured protocol, each loaded only when chosen (the gRPC one
 * brings @grpc/grpc-js). Endpoint, headers and timeout are ours (settings.ts); compression,
 * certificates and gRPC's OTEL_EXPORTER_OTLP_INSECURE are left to the exporter's own reading
 * of the standard variables, as Go left them to its SDK.
 */
export async function createExporter (settings: TracingSettings): Promise<SpanExporter> {
  const { endpoint: url, headers, exportTimeoutMs: timeoutMillis } = settings
  if (settings.protocol === 'grpc') {
    const [{ OTLPTraceExporter }, { Metadata }] = await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-grpc'),
      import('@grpc/grpc-js')
    ])
    // The gRPC exporter takes headers only as metadata.
    const metadata = new Metadata()
    for (const [key, value] of Object.entries(headers)) metadata.set(key, value)
    return new OTLPTraceExporter({ url, metadata, timeoutMillis })
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto')
  return new OTLPTraceExporter({ url, headers: { ...headers }, timeoutMillis })
}
