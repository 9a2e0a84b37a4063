import { ConfigError } from '../errors.js'
import { readTransportSettings, TRANSPORT_VARIABLES, type OtlpCompression, type OtlpTls } from './transport-settings.js'

// The tracing settings: Go's three (EDGE_API_OTEL_ENABLED, OTEL_ENDPOINT, OTEL_HEADERS) and the
// standard OTEL_* ones, read here rather than by the SDK so that a malformed value refuses to
// boot naming its variable, like every other setting (Go silently stayed off). Nothing here
// loads OpenTelemetry: with tracing off the SDK is never imported.

/** Every variable tracing reads besides EDGE_API_OTEL_ENABLED (config.env.example and the ConfigMap show them). */
export const TRACING_VARIABLES = [
  'OTEL_SDK_DISABLED',
  'OTEL_ENDPOINT',
  'OTEL_HEADERS',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_TIMEOUT',
  'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
  ...TRANSPORT_VARIABLES,
  'OTEL_EXPORTER_OTLP_INSECURE',
  'OTEL_EXPORTER_OTLP_TRACES_INSECURE',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_BSP_MAX_QUEUE_SIZE',
  'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  'OTEL_BSP_EXPORT_TIMEOUT'
] as const

export type TracingVariable = 'EDGE_API_OTEL_ENABLED' | typeof TRACING_VARIABLES[number]

/** OTLP over gRPC (Go's OTEL_ENDPOINT) or over HTTP with protobuf bodies (the spec's default). */
export type OtlpProtocol = 'grpc' | 'http/protobuf'

export const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const
export type SamplerName = typeof SAMPLERS[number]

export interface TracingSettings {
  /** Where spans go: the full URL (…/v1/traces for http/protobuf; scheme, host and port for gRPC). */
  readonly endpoint: string
  readonly protocol: OtlpProtocol
  /** Sent with every export (OTEL_HEADERS over OTEL_EXPORTER_OTLP_TRACES_HEADERS over OTEL_EXPORTER_OTLP_HEADERS). Secrets: never logged. */
  readonly headers: Readonly<Record<string, string>>
  /** One export's limit (OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT). */
  readonly exportTimeoutMs: number
  /** OTEL_EXPORTER_OTLP_(TRACES_)COMPRESSION: gzip bodies (HTTP) or messages (gRPC), or none. */
  readonly compression: OtlpCompression
  /** The CA and client certificate files (OTEL_EXPORTER_OTLP_(TRACES_)CERTIFICATE, …CLIENT_KEY, …CLIENT_CERTIFICATE), for https:// only. */
  readonly tls: OtlpTls
  /** service.name and OTEL_RESOURCE_ATTRIBUTES (the provider adds service.version when they have none). */
  readonly resource: Readonly<Record<string, string>>
  readonly sampler: SamplerName
  /** The ratio of the traceidratio samplers, 0 to 1. */
  readonly samplerRatio: number
  /** The batch span processor (OTEL_BSP_*): Go's and the spec's defaults. */
  readonly batch: {
    readonly scheduleDelayMs: number
    readonly maxQueueSize: number
    readonly maxExportBatchSize: number
    readonly exportTimeoutMs: number
  }
}

type Env = Readonly<Record<string, string | undefined>>

// Go's strconv.ParseBool, which EDGE_API_OTEL_ENABLED was read with ("accepts Go boolean values").
const GO_TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True']
const GO_FALSE = ['0', 'f', 'F', 'FALSE', 'false', 'False']

/**
 * The tracing settings, or undefined when tracing is off: EDGE_API_OTEL_ENABLED unset or false,
 * or OTEL_SDK_DISABLED=true (which wins, with a warning). The other variables are read only
 * when tracing is on; a malformed one throws ConfigError naming it. Reads the TLS files the
 * variables name (transport-settings.ts), nothing else.
 */
export function readTracingSettings (env: Env, warnings: string[]): TracingSettings | undefined {
  const vars = variablesOf(env)
  if (!isTracingOn(vars, warnings)) return undefined
  const { read, invalid } = vars
  const protocolOf = (key: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' | 'OTEL_EXPORTER_OTLP_PROTOCOL'): OtlpProtocol | undefined => {
    const text = read(key)
    if (text === undefined || text === 'grpc' || text === 'http/protobuf') return text
    throw invalid(key, 'must be grpc or http/protobuf (http/json is not supported)')
  }
  const chosenProtocol = protocolOf('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? protocolOf('OTEL_EXPORTER_OTLP_PROTOCOL')
  const insecure = vars.flag('OTEL_EXPORTER_OTLP_TRACES_INSECURE') ?? vars.flag('OTEL_EXPORTER_OTLP_INSECURE') ?? false
  const { endpoint, protocol } = resolveEndpoint(read, invalid, chosenProtocol, insecure)
  const { compression, tls, tlsVariables } = readTransportSettings(read, invalid)
  if (tlsVariables.length > 0 && !endpoint.startsWith('https:')) {
    warnings.push(`${tlsVariables.join(', ')} not used: the OTLP endpoint ${endpoint} is plaintext (https:// is TLS)`)
  }
  const timeout = (key: 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT' | 'OTEL_EXPORTER_OTLP_TIMEOUT'): number | undefined =>
    read(key) === undefined ? undefined : vars.integer(key, 0, 1)
  return {
    endpoint,
    protocol,
    headers: readHeaders(vars),
    exportTimeoutMs: timeout('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? timeout('OTEL_EXPORTER_OTLP_TIMEOUT') ?? 10_000,
    compression,
    tls,
    resource: readResource(vars),
    ...readSampler(vars),
    batch: readBatch(vars)
  }
}

/** The tracing variables of an environment: each read trimmed ('' as unset), and its refusals. */
interface Variables {
  read: (key: TracingVariable) => string | undefined
  invalid: (key: TracingVariable, allowed: string) => ConfigError
  /** true or false in any case; undefined when unset. */
  flag: (key: TracingVariable) => boolean | undefined
  integer: (key: TracingVariable, fallback: number, min: number) => number
}

function variablesOf (env: Env): Variables {
  const read = (key: TracingVariable): string | undefined => {
    const value = env[key]?.trim()
    return value === '' ? undefined : value
  }
  const invalid = (key: TracingVariable, allowed: string): ConfigError =>
    new ConfigError(key, `${key}=${JSON.stringify(env[key])} is invalid: ${allowed}`)
  const flag = (key: TracingVariable): boolean | undefined => {
    const text = read(key)?.toLowerCase()
    if (text === undefined || text === 'true' || text === 'false') return text === undefined ? undefined : text === 'true'
    throw invalid(key, 'must be true or false')
  }
  const integer = (key: TracingVariable, fallback: number, min: number): number => {
    const text = read(key)
    if (text === undefined) return fallback
    if (!/^\d+$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text))) throw invalid(key, `must be an integer of at least ${min}`)
    return Number(text)
  }
  return { read, invalid, flag, integer }
}

/** EDGE_API_OTEL_ENABLED (Go's booleans) and not OTEL_SDK_DISABLED, which wins with a warning. */
function isTracingOn ({ read, invalid, flag }: Variables, warnings: string[]): boolean {
  const enabled = read('EDGE_API_OTEL_ENABLED') ?? 'false'
  if (!GO_TRUE.includes(enabled) && !GO_FALSE.includes(enabled)) throw invalid('EDGE_API_OTEL_ENABLED', 'must be true or false (or Go\'s 1, t, TRUE, 0, f, FALSE)')
  const disabled = flag('OTEL_SDK_DISABLED') ?? false
  if (!GO_TRUE.includes(enabled)) return false
  if (disabled) warnings.push('tracing is off: OTEL_SDK_DISABLED=true overrides EDGE_API_OTEL_ENABLED')
  return !disabled
}

function readHeaders ({ read }: Variables): Record<string, string> {
  // Headers carry credentials: their refusal names the variable and the key, never the value.
  const invalidSecret = (key: TracingVariable) => (allowed: string): ConfigError => new ConfigError(key, `${key} is invalid: ${allowed}`)
  return {
    ...keyValues(read('OTEL_EXPORTER_OTLP_HEADERS'), true, invalidSecret('OTEL_EXPORTER_OTLP_HEADERS')),
    ...keyValues(read('OTEL_EXPORTER_OTLP_TRACES_HEADERS'), true, invalidSecret('OTEL_EXPORTER_OTLP_TRACES_HEADERS')),
    // Go's own: not percent-decoded, as otelutil.ParseHeaders did not.
    ...keyValues(read('OTEL_HEADERS'), false, invalidSecret('OTEL_HEADERS'))
  }
}

function readResource ({ read, invalid }: Variables): Record<string, string> {
  // Spec precedence: OTEL_SERVICE_NAME, then service.name in OTEL_RESOURCE_ATTRIBUTES, then ours.
  const attributes = keyValues(read('OTEL_RESOURCE_ATTRIBUTES'), true, (problem) => invalid('OTEL_RESOURCE_ATTRIBUTES', problem))
  const resource = { 'service.name': 'edge-api', ...attributes }
  const serviceName = read('OTEL_SERVICE_NAME')
  if (serviceName !== undefined) resource['service.name'] = serviceName
  return resource
}

function readSampler ({ read, invalid }: Variables): Pick<TracingSettings, 'sampler' | 'samplerRatio'> {
  const sampler = (read('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on') as SamplerName
  if (!SAMPLERS.includes(sampler)) throw invalid('OTEL_TRACES_SAMPLER', `must be one of ${SAMPLERS.join(', ')}`)
  let samplerRatio = 1
  const ratioText = read('OTEL_TRACES_SAMPLER_ARG')
  // The argument means something to the ratio samplers only; the others ignore it (the spec's rule).
  if (sampler.endsWith('traceidratio') && ratioText !== undefined) {
    samplerRatio = Number(ratioText)
    if (!/^(?:\d+(?:\.\d*)?|\.\d+)$/.test(ratioText) || samplerRatio > 1) throw invalid('OTEL_TRACES_SAMPLER_ARG', 'must be a number from 0 to 1')
  }
  return { sampler, samplerRatio }
}

function readBatch ({ integer, invalid }: Variables): TracingSettings['batch'] {
  const maxQueueSize = integer('OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1)
  const maxExportBatchSize = integer('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1)
  if (maxExportBatchSize > maxQueueSize) throw invalid('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', `must not exceed OTEL_BSP_MAX_QUEUE_SIZE (${maxQueueSize})`)
  return {
    scheduleDelayMs: integer('OTEL_BSP_SCHEDULE_DELAY', 5000, 1),
    maxQueueSize,
    maxExportBatchSize,
    exportTimeoutMs: integer('OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1)
  }
}

/**
 * The first endpoint set: Go's OTEL_ENDPOINT (gRPC unless a protocol variable says otherwise),
 * then the standard traces endpoint (used as it is), then the standard base endpoint (plus
 * v1/traces over HTTP); the standard ones default to http/protobuf, as the spec says. A gRPC
 * endpoint may omit the scheme (host:port): then OTEL_EXPORTER_OTLP_(TRACES_)INSECURE decides,
 * TLS unless it is true (the spec's rule; a scheme, when given, decides by itself).
 */
function resolveEndpoint (
  read: (key: TracingVariable) => string | undefined,
  invalid: (key: TracingVariable, allowed: string) => ConfigError,
  chosen: OtlpProtocol | undefined,
  insecure: boolean
): { endpoint: string, protocol: OtlpProtocol } {
  const keys = ['OTEL_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'] as const
  const key = keys.find((k) => read(k) !== undefined)
  if (key === undefined) {
    throw new ConfigError('OTEL_ENDPOINT', 'EDGE_API_OTEL_ENABLED is true but no endpoint is set: set OTEL_ENDPOINT (OTLP/gRPC, e.g. http://jaeger:4317) ' +
      'or OTEL_EXPORTER_OTLP_ENDPOINT (OTLP/HTTP, e.g. http://collector:4318)')
  }
  const text = read(key) as string
  const protocol = chosen ?? (key === 'OTEL_ENDPOINT' ? 'grpc' : 'http/protobuf')
  const schemeless = protocol === 'grpc' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(text)
  let url: URL
  try {
    url = new URL(schemeless ? `${insecure ? 'http' : 'https'}://${text}` : text)
  } catch {
    throw invalid(key, 'must be an http:// or https:// URL (example: http://jaeger:4317)')
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw invalid(key, 'must be an http:// or https:// URL without credentials, query or fragment (example: http://jaeger:4317)')
  }
  // gRPC reaches scheme, host and port; a path means nothing to it.
  if (protocol === 'grpc') return { endpoint: url.origin, protocol }
  if (key === 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') return { endpoint: url.href, protocol }
  return { endpoint: url.href.replace(/\/*$/, '/v1/traces'), protocol }
}

/**
 * `key=value,key=value` (OTEL_HEADERS, OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES).
 * A pair without "=", an empty key or an empty value is refused; the message names the key at
 * most, never a value (they hold credentials). The standard variables are percent-decoded.
 */
function keyValues (text: string | undefined, decode: boolean, invalid: (problem: string) => ConfigError): Record<string, string> {
  const pairs: Record<string, string> = {}
  if (text === undefined) return pairs
  text.split(',').forEach((pair, i) => {
    const at = pair.indexOf('=')
    const key = pair.slice(0, at).trim()
    let value = pair.slice(at + 1).trim()
    if (at < 0 || key === '') throw invalid(`must be key=value pairs separated by commas; pair ${i + 1} has ${at < 0 ? 'no "="' : 'no key'}`)
    if (value === '') throw invalid(`must be key=value pairs separated by commas; ${key} has no value`)
    if (decode) {
      try {
        value = decodeURIComponent(value)
      } catch {
        throw invalid(`must be key=value pairs with percent-encoded values; the value of ${key} is not`)
      }
    }
    pairs[key] = value
  })
  return pairs
}
