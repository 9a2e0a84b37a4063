import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'
import { Pool } from 'undici'
import { OtlpTraceSerializer } from './otlp-serializer.js'
import type { TracingSettings } from './settings.js'
import type { SpanExporter } from './span-queue.js'

/**
 * How many exports may be in flight at once. Each pins its batch until the collector
 * answers or the export times out, and the queue starts the next batch when its own
 * OTEL_BSP_EXPORT_TIMEOUT passes, whether or not the last one ended: without a bound a
 * hanging collector would hold batch after batch. Beyond it an export fails at once and its
 * spans are counted lost (export_failed).
 */
export function exportsInFlight (batch: TracingSettings['batch']): number {
  // The flush at exit sends the whole queue at once, one export per batch, beside the one
  // that may still be in flight: none of those may be refused.
  return Math.ceil(batch.maxQueueSize / batch.maxExportBatchSize) + 1
}

/** One protocol's way to send an export request: rejects with an ExportError. */
export interface OtlpTransport {
  send (body: Uint8Array, timeoutMs: number): Promise<void>
  close (): Promise<void>
}

/** A failed export, and whether the OTLP specification says to try it again (a transient failure). */
export class ExportError extends Error {
  readonly retryable: boolean

  constructor (message: string, retryable: boolean, cause?: unknown) {
    super(message, { cause })
    this.retryable = retryable
  }
}

/** The OTLP/HTTP answers that are transient (the specification's list). */
const RETRYABLE_STATUS = new Set([429, 502, 503, 504])

const gzipped = promisify(gzip)

/**
 * OTLP/HTTP with protobuf bodies: a POST to the traces endpoint, keep-alive, over undici;
 * gzipped with Content-Encoding: gzip when OTEL_EXPORTER_OTLP_COMPRESSION says so, and over
 * https:// with the configured CA and client certificate.
 */
export function httpTransport (settings: TracingSettings, userAgent: string): OtlpTransport {
  const url = new URL(settings.endpoint)
  const pool = new Pool(url.origin, { connections: exportsInFlight(settings.batch), connect: { ...settings.tls } })
  const gzip = settings.compression === 'gzip'
  const headers = { ...settings.headers, 'content-type': 'application/x-protobuf', 'user-agent': userAgent, ...(gzip ? { 'content-encoding': 'gzip' } : {}) }
  return {
    async send (body, timeoutMs) {
      let answer
      try {
        const sent = gzip ? await gzipped(body) : body
        answer = await pool.request({ path: url.pathname, method: 'POST', headers, body: sent, signal: AbortSignal.timeout(timeoutMs) })
      } catch (error) {
        // Refused, reset or timed out: transient (a retry still has to fit in the export's time).
        throw new ExportError(`OTLP/HTTP export failed: ${(error as Error).message}`, true, error)
      }
      await answer.body.dump()
      if (answer.statusCode >= 200 && answer.statusCode < 300) return
      throw new ExportError(`OTLP/HTTP export answered ${answer.statusCode}`, RETRYABLE_STATUS.has(answer.statusCode))
    },
    close: async () => await pool.close()
  }
}

const EXPORT_METHOD = '/opentelemetry.proto.collector.trace.v1.TraceService/Export'
/** The transient gRPC status codes (the specification's list): CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, OUT_OF_RANGE, UNAVAILABLE, DATA_LOSS. */
const RETRYABLE_CODES = new Set([1, 4, 8, 10, 11, 14, 15])

/**
 * OTLP/gRPC: the Export call with the request's bytes; http:// is plaintext, https:// TLS with
 * the configured CA and client certificate. grpc-js gzips the message (grpc-encoding: gzip)
 * when OTEL_EXPORTER_OTLP_COMPRESSION says so. Loads @grpc/grpc-js.
 */
export async function grpcTransport (settings: TracingSettings, userAgent: string): Promise<OtlpTransport> {
  const { Client, compressionAlgorithms, credentials, Metadata } = await import('@grpc/grpc-js')
  const url = new URL(settings.endpoint)
  const { ca = null, key = null, cert = null } = settings.tls
  const client = new Client(url.host, url.protocol === 'https:' ? credentials.createSsl(ca, key, cert) : credentials.createInsecure(), {
    'grpc.primary_user_agent': userAgent,
    ...(settings.compression === 'gzip' ? { 'grpc.default_compression_algorithm': compressionAlgorithms.gzip } : {})
  })
  const metadata = new Metadata()
  for (const [key, value] of Object.entries(settings.headers)) metadata.set(key, value)
  const bytes = (body: Uint8Array): Buffer => Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  return {
    send: async (body, timeoutMs) => await new Promise<void>((resolve, reject) => {
      client.makeUnaryRequest(EXPORT_METHOD, bytes, (answer: Buffer) => answer, body, metadata, { deadline: Date.now() + timeoutMs }, (error) => {
        if (error === null) resolve()
        else reject(new ExportError(`OTLP/gRPC export failed: ${error.message}`, RETRYABLE_CODES.has(error.code), error))
      })
    }),
    close: async () => client.close()
  }
}

/** The first wait before a retry, its growth and its cap, and the attempts at most (the SDK's exporters' values). */
const RETRY = { firstMs: 1000, factor: 1.5, maxMs: 5000, attempts: 5 }

/**
 * Sends `body`, trying a transient failure again after a growing, jittered wait, as long as
 * the next try starts within `timeoutMs` of the first (OTEL_EXPORTER_OTLP_TIMEOUT bounds the
 * whole export, retries included).
 */
export async function sendWithRetries (transport: OtlpTransport, body: Uint8Array, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs
  const attempt = async (n: number, waitMs: number): Promise<void> => {
    try {
      await transport.send(body, Math.max(1, Math.ceil(deadline - performance.now())))
    } catch (error) {
      // Both transports reject with an ExportError only.
      const jittered = waitMs * (0.8 + Math.random() * 0.4)
      if (!(error as ExportError).retryable || n >= RETRY.attempts || performance.now() + jittered >= deadline) throw error
      await sleep(jittered, undefined, { ref: false })
      await attempt(n + 1, Math.min(waitMs * RETRY.factor, RETRY.maxMs))
    }
  }
  await attempt(1, RETRY.firstMs)
}

/**
 * The OTLP export of the configured protocol: our serializer (otlp-serializer.ts) over our span
 * records, sent by the protocol's transport to the endpoint with the headers and the timeout
 * of settings.ts, at most exportsInFlight at once.
 */
export async function createExporter (settings: TracingSettings, resource: Readonly<Record<string, string>>, scopeVersion: string): Promise<SpanExporter> {
  const serializer = new OtlpTraceSerializer(resource, scopeVersion)
  const userAgent = `edge-api/${scopeVersion}`
  const transport = settings.protocol === 'grpc' ? await grpcTransport(settings, userAgent) : httpTransport(settings, userAgent)
  const limit = exportsInFlight(settings.batch)
  const inFlight = new Set<Promise<void>>()
  return {
    export (spans, done) {
      const body = serializer.serializeRequest(spans)
      if (body === undefined) {
        done({ code: 0 })
        return
      }
      if (inFlight.size >= limit) {
        done({ code: 1, error: new Error(`${limit} exports already in flight`) })
        return
      }
      const sending: Promise<void> = sendWithRetries(transport, body, settings.exportTimeoutMs)
        .then(() => done({ code: 0 }), (error: Error) => done({ code: 1, error }))
        .finally(() => inFlight.delete(sending))
      inFlight.add(sending)
    },
    async shutdown () {
      await Promise.all(inFlight)
      await transport.close()
    }
  }
}
