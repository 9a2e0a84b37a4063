import { createPrivateKey, X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { ConfigError } from '../errors.js'

// The OTLP exporter's transport options the SDK's transport honoured and ours must too:
// compression and the TLS files (the spec's "Certificate File", "Client Key File" and "Client
// Certificate File"), each signal-specific variable over the generic one. A file is read and
// parsed here, at boot, so that a missing or malformed one refuses to boot naming its variable
// instead of failing every export later.

/** The variables read here (part of settings.ts's TRACING_VARIABLES). */
export const TRANSPORT_VARIABLES = [
  'OTEL_EXPORTER_OTLP_COMPRESSION',
  'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION',
  'OTEL_EXPORTER_OTLP_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_CLIENT_KEY',
  'OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY',
  'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE'
] as const
type TransportVariable = typeof TRANSPORT_VARIABLES[number]

export type OtlpCompression = 'gzip' | 'none'

/** PEM contents, not paths: read once at boot. Absent: the system's roots, no client certificate. */
export interface OtlpTls {
  /** The CA (or CAs) the collector's certificate must chain to, instead of the system's roots. */
  readonly ca?: Buffer
  /** The client certificate and its private key (mTLS): both or neither. */
  readonly cert?: Buffer
  readonly key?: Buffer
}

export interface TransportSettings {
  readonly compression: OtlpCompression
  readonly tls: OtlpTls
  /** The variables of the TLS files that are set, for the warning when the endpoint is plaintext. */
  readonly tlsVariables: readonly TransportVariable[]
}

type Read = (key: TransportVariable) => string | undefined
type Invalid = (key: TransportVariable, allowed: string) => ConfigError

/** The first of a signal-specific variable and its generic one that is set, and its value. */
function either (read: Read, traces: TransportVariable, generic: TransportVariable): [TransportVariable, string] | undefined {
  for (const key of [traces, generic]) {
    const value = read(key)
    if (value !== undefined) return [key, value]
  }
  return undefined
}

/** Reads the TLS files and the compression; throws a ConfigError naming the variable at fault. */
export function readTransportSettings (read: Read, invalid: Invalid): TransportSettings {
  const compressionOf = (key: TransportVariable): OtlpCompression | undefined => {
    const text = read(key)?.toLowerCase()
    if (text === undefined || text === 'gzip' || text === 'none') return text
    throw invalid(key, 'must be gzip or none')
  }
  const compression = compressionOf('OTEL_EXPORTER_OTLP_TRACES_COMPRESSION') ?? compressionOf('OTEL_EXPORTER_OTLP_COMPRESSION') ?? 'none'

  const file = (traces: TransportVariable, generic: TransportVariable, parse: (pem: Buffer) => unknown, what: string): [TransportVariable, Buffer] | undefined => {
    const chosen = either(read, traces, generic)
    if (chosen === undefined) return undefined
    const [key, path] = chosen
    let pem: Buffer
    try {
      pem = readFileSync(path)
    } catch (error) {
      throw invalid(key, `must be a readable file: ${(error as Error).message}`)
    }
    try {
      parse(pem)
    } catch {
      throw invalid(key, `must be a PEM file holding ${what}`)
    }
    return [key, pem]
  }
  const ca = file('OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE', 'OTEL_EXPORTER_OTLP_CERTIFICATE', (pem) => new X509Certificate(pem), 'a certificate')
  const cert = file('OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE', 'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE', (pem) => new X509Certificate(pem), 'a certificate')
  const key = file('OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY', 'OTEL_EXPORTER_OTLP_CLIENT_KEY', (pem) => createPrivateKey(pem), 'a private key')
  // A client certificate is useless without its key and the other way round: refuse the half.
  if (cert !== undefined && key === undefined) throw invalid('OTEL_EXPORTER_OTLP_CLIENT_KEY', `must be set with ${cert[0]} (mTLS needs the client certificate's key)`)
  if (key !== undefined && cert === undefined) throw invalid('OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE', `must be set with ${key[0]} (mTLS needs the key's certificate)`)
  if (cert !== undefined && key !== undefined && !new X509Certificate(cert[1]).checkPrivateKey(createPrivateKey(key[1]))) {
    throw invalid(key[0], `must be the private key of ${cert[0]}`)
  }
  return {
    compression,
    tls: { ca: ca?.[1], cert: cert?.[1], key: key?.[1] },
    tlsVariables: [ca?.[0], cert?.[0], key?.[0]].filter((k) => k !== undefined)
  }
}
