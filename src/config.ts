import { isIP } from 'node:net'
import { formatDuration, parseDuration } from './duration.js'

/** Every setting edge-api reads, with its default (undefined = required / derived). */
export const CONFIG_DEFAULTS = {
  CHAIN_REST_URL: undefined,
  CHAIN_GRPC_URL: undefined,
  EDGE_API_PORT: '18080',
  EDGE_API_HOST: '0.0.0.0',
  EDGE_API_DRAIN_ANNOUNCE: '5s',
  EDGE_API_SHUTDOWN_BUDGET: '2m',
  EDGE_API_CHAIN_TIMEOUT: '30s',
  EDGE_API_CHAIN_CONCURRENCY: '64',
  EDGE_API_LOG_LEVEL: 'info',
  EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'false'
} as const

export type ConfigKey = keyof typeof CONFIG_DEFAULTS
export type Env = Readonly<Record<string, string | undefined>>

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = typeof LOG_LEVELS[number]

// The router checks /readyz every 1 s with `timeout check 3s`: it needs up to ~4 s to see
// a replica turn unready. One second of margin on top gives the smallest safe window.
export const MIN_DRAIN_ANNOUNCE_MS = 5000

export interface Config {
  readonly chainRestUrl: string
  readonly port: number
  readonly host: string
  readonly drainAnnounceMs: number
  readonly shutdownBudgetMs: number
  readonly chainTimeoutMs: number
  readonly chainConcurrency: number
  readonly logLevel: LogLevel
  /** Serve the four optional verify/debug routes; otherwise they answer 403. */
  readonly exposeOptionalRoutes: boolean
  /** Things the operator should know about how the config was read (logged at boot). */
  readonly warnings: readonly string[]
}

/** A setting that refuses to boot; the message names the variable, the value and what is allowed. */
export class ConfigError extends Error {
  readonly variable: ConfigKey

  constructor (variable: ConfigKey, message: string) {
    super(message)
    this.name = 'ConfigError'
    this.variable = variable
  }
}

/** Reads the configuration from an environment object. Pure: no process access, throws ConfigError. */
export function loadConfig (env: Env): Config {
  const read = (key: ConfigKey): string | undefined => {
    const value = env[key]?.trim()
    return value === '' || value === undefined ? CONFIG_DEFAULTS[key] : value
  }
  const invalid = (key: ConfigKey, allowed: string): ConfigError =>
    new ConfigError(key, `${key}=${JSON.stringify(env[key])} is invalid: ${allowed}`)

  const duration = (key: ConfigKey, rule: (ms: number) => string | undefined): number => {
    const ms = parseDuration(read(key) as string)
    if (ms === undefined) throw invalid(key, 'must be a duration such as 250ms, 5s, 2m or 1m30s (a bare number other than 0 is not)')
    const broken = rule(ms)
    if (broken !== undefined) throw invalid(key, broken)
    return Math.round(ms)
  }
  const positive = (ms: number): string | undefined => ms > 0 ? undefined : 'must be greater than 0'
  const integer = (key: ConfigKey, min: number, max: number): number => {
    const text = read(key) as string
    const n = Number(text)
    if (!/^\d+$/.test(text) || n < min || n > max) throw invalid(key, `must be an integer from ${min} to ${max}`)
    return n
  }

  const boolean = (key: ConfigKey): boolean => {
    const text = read(key)
    if (text !== 'true' && text !== 'false') throw invalid(key, 'must be true or false')
    return text === 'true'
  }

  const warnings: string[] = []
  const chainRestUrl = resolveChainRestUrl(read('CHAIN_REST_URL'), read('CHAIN_GRPC_URL'), warnings, invalid)

  const host = read('EDGE_API_HOST') as string
  if (isIP(host) === 0 && !/^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(host)) {
    throw invalid('EDGE_API_HOST', 'must be an IP address or a host name to listen on')
  }

  const logLevel = read('EDGE_API_LOG_LEVEL') as LogLevel
  if (!LOG_LEVELS.includes(logLevel)) throw invalid('EDGE_API_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`)

  return {
    chainRestUrl,
    port: integer('EDGE_API_PORT', 0, 65535),
    host,
    drainAnnounceMs: duration('EDGE_API_DRAIN_ANNOUNCE', (ms) => {
      if (ms === 0 || ms >= MIN_DRAIN_ANNOUNCE_MS) return undefined
      return `must be 0 (no balancer in front) or at least ${formatDuration(MIN_DRAIN_ANNOUNCE_MS)}: ` +
        'the router needs up to ~4s to observe the failing check (inter 1s, timeout check 3s), ' +
        'and a shorter window closes the listener while traffic still arrives'
    }),
    shutdownBudgetMs: duration('EDGE_API_SHUTDOWN_BUDGET', positive),
    chainTimeoutMs: duration('EDGE_API_CHAIN_TIMEOUT', positive),
    chainConcurrency: integer('EDGE_API_CHAIN_CONCURRENCY', 1, 65535),
    logLevel,
    exposeOptionalRoutes: boolean('EDGE_API_EXPOSE_OPTIONAL_ROUTES'),
    warnings
  }
}

function resolveChainRestUrl (
  rest: string | undefined,
  grpc: string | undefined,
  warnings: string[],
  invalid: (key: ConfigKey, allowed: string) => ConfigError
): string {
  if (rest !== undefined) {
    let url: URL
    try {
      url = new URL(rest)
    } catch {
      throw invalid('CHAIN_REST_URL', 'must be an http:// or https:// URL (example: http://node:1317)')
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
      throw invalid('CHAIN_REST_URL', 'must be an http:// or https:// base URL without query or fragment (example: http://node:1317)')
    }
    return url.href.replace(/\/+$/, '')
  }
  if (grpc === undefined) {
    throw new ConfigError('CHAIN_REST_URL', 'CHAIN_REST_URL is required (example: http://node:1317)')
  }
  // The Go service's setting: "node:9090", "dns:///node:9090" or "grpc://[::1]:9090".
  const hostPort = grpc.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/^\/+|\/+$/g, '')
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::\d+)?$/.exec(hostPort)
  if (match === null) {
    throw invalid('CHAIN_GRPC_URL', 'must be host:port (example: node:9090) to derive CHAIN_REST_URL from; or set CHAIN_REST_URL')
  }
  const derived = `http://${match[1] as string}:1317`
  warnings.push(`CHAIN_REST_URL is unset; derived ${derived} from CHAIN_GRPC_URL=${grpc}. Set CHAIN_REST_URL to override`)
  return derived
}
