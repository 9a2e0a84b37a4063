import { isIP } from 'node:net'
import { formatByteSize, parseByteSize } from './byte-size.js'
import { formatDuration, parseDuration } from './duration.js'
import { readEdgeSettings, type EdgeSettings } from './edge-settings.js'
import { ConfigError } from './errors.js'
import { readStoreSettings, type StoreSettings } from './config/store-settings.js'
import { readTracingSettings, type TracingSettings } from './tracing/settings.js'

/** One setting edge-api reads from its environment. */
export interface Setting {
  /** Used when the variable is unset or empty. */
  readonly default?: string
  /** Without a default: what an unset variable means (the README's default column). */
  readonly unset?: string
}

/**
 * Every setting edge-api reads, and its default: the one list. loadConfig reads these and
 * no others; the README's configuration table, config.env.example, both compose files and
 * kubernetes/configmap.yaml are checked against it (test/config-copies.test.ts). A new
 * variable: a row here, its rule in loadConfig, and the copies the test names.
 */
export const SETTINGS = {
  /** The chain node's REST API; several nodes of one chain separated by commas. */
  CHAIN_REST_URL: { unset: 'required' },
  /** The Go service's setting: CHAIN_REST_URL is derived from it when that is unset. */
  CHAIN_GRPC_URL: { unset: 'none' },
  EDGE_API_PORT: { default: '18080' },
  EDGE_API_HOST: { default: '0.0.0.0' },
  EDGE_API_DRAIN_ANNOUNCE: { default: '5s' },
  EDGE_API_SHUTDOWN_BUDGET: { default: '2m' },
  EDGE_API_CHAIN_TIMEOUT: { default: '30s' },
  EDGE_API_CHAIN_CONCURRENCY: { default: '64' },
  EDGE_API_CHAIN_MAX_RESPONSE: { default: '16MiB' },
  /** Built /v1 answers by route, parameters and height, in bytes; 0 = off. */
  EDGE_API_CACHE_SIZE: { default: '64MiB' },
  /** A node more than this many blocks behind the best head takes no latest-state reads. */
  EDGE_API_MAX_NODE_LAG: { default: '2' },
  /** The oldest a known chain head may be when a latest-state read starts. */
  EDGE_API_HEAD_MAX_AGE: { default: '1s' },
  /** The event-loop delay /v1's load shedding holds the replica at under overload; 0 = none. */
  EDGE_API_SHED_DELAY: { default: '20ms' },
  /** Hedged chain reads: at most this share of reads gets a second attempt on another node; off = none. */
  EDGE_API_HEDGE: { default: '10%' },
  /** The shortest a read waits for its node before it is hedged. */
  EDGE_API_HEDGE_MIN_DELAY: { default: '10ms' },
  EDGE_API_LOG_LEVEL: { default: 'info' },
  EDGE_API_EXPOSE_OPTIONAL_ROUTES: { default: 'false' },
  EDGE_API_METRICS_PORT: { default: '9464' },
  EDGE_API_METRICS_HOST: { unset: 'EDGE_API_HOST' },
  /** OpenTelemetry tracing; the OTEL_* variables it reads are in src/tracing/settings.ts. */
  EDGE_API_OTEL_ENABLED: { default: 'false' },
  /** The shared tier's Redis or Valkey (docs/shared-tier.md); unset = each replica on its own. */
  EDGE_API_REDIS_URL: { unset: 'none' },
  /** The store's password (requirepass), kept out of the URL so it can come from a secret; a password in the URL wins. */
  EDGE_API_REDIS_PASSWORD: { unset: 'none' },
  /** Signs the answers the replicas share (docs/shared-tier.md); unset = a digest that catches foreign values, not forged ones. */
  EDGE_API_REDIS_SECRET: { unset: 'none' },
  /** The store's deadline for a command a request waits on; past it the replica serves on its own. */
  EDGE_API_REDIS_TIMEOUT: { default: '10ms' },
  // The public edge (src/edge-settings.ts, docs/clients-and-limits.md).
  EDGE_API_TRUSTED_PROXIES: { unset: 'none' },
  EDGE_API_CORS_ORIGINS: { default: '*' },
  EDGE_API_BLOCKED_ROUTES: { unset: 'none' },
  EDGE_API_RATE_LIMIT: { default: 'off' }
} as const satisfies Record<string, Setting>

export type ConfigKey = keyof typeof SETTINGS

/** Each setting's default (undefined: required, or derived). */
export const CONFIG_DEFAULTS = Object.fromEntries(
  Object.entries(SETTINGS).map(([key, setting]: [string, Setting]) => [key, setting.default])
) as Readonly<Record<ConfigKey, string | undefined>>
export type Env = Readonly<Record<string, string | undefined>>

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = typeof LOG_LEVELS[number]

// The router checks /readyz every 1 s with `timeout check 3s`: it needs up to ~4 s to see
// a replica turn unready. One second of margin on top gives the smallest safe window.
export const MIN_DRAIN_ANNOUNCE_MS = 5000

// Below 64KiB a real gateway answer (a participants page) would not fit. Above 256MiB the
// text could not become one JavaScript string (V8's limit is ~512M UTF-16 units, and a
// process holding several such answers at once would not survive anyway).
export const MIN_CHAIN_MAX_RESPONSE = 64 * 1024
export const MAX_CHAIN_MAX_RESPONSE = 256 * 1024 * 1024

// The answer cache's bound: 0 turns it off; 1 GiB is far beyond the answers of a few
// thousand keys a replica serves, and must stay well within the process's memory.
export const MAX_CACHE_SIZE = 1024 * 1024 * 1024
// A node this many blocks behind the best head is excluded from latest-state reads; beyond
// an hour of gonka blocks (~5 s each) the setting would exclude nothing that matters.
export const MAX_NODE_LAG = 1000
export const MAX_HEAD_MAX_AGE_MS = 60_000
// Below 5 ms the target is within the event-loop delay histogram's 10 ms resolution's noise
// and sheds a replica that keeps up; beyond 10 s no client is still waiting.
export const MIN_SHED_DELAY_MS = 5
export const MAX_SHED_DELAY_MS = 10_000
// Hedges beyond half of the reads would be a second copy of the traffic, not a hedge.
export const MAX_HEDGE_PERCENT = 50
// A hedge later than this rescues nothing the chain timeout would not (the delay is capped at 1 s anyway).
export const MAX_HEDGE_MIN_DELAY_MS = 10_000

export interface Config extends StoreSettings {
  /** The nodes of one chain, in the order given; at least one. */
  readonly chainRestUrls: readonly string[]
  readonly port: number
  readonly host: string
  readonly drainAnnounceMs: number
  readonly shutdownBudgetMs: number
  readonly chainTimeoutMs: number
  readonly chainConcurrency: number
  /** The largest chain answer read, in bytes; a larger one is cut off (502). */
  readonly chainMaxResponseBytes: number
  /** The answer cache's bound in bytes; 0 = no answer cache. */
  readonly cacheBytes: number
  /** A node more than this many blocks behind the best head takes no latest-state reads. */
  readonly maxNodeLag: number
  /** The oldest a known chain head may be when a latest-state read starts. */
  readonly headMaxAgeMs: number
  /** The event-loop delay, ms, that /v1's load shedding holds the replica at under overload; 0 = no delay-based shedding. */
  readonly shedDelayMs: number
  /** The most reads hedged, as a share of reads (0–0.5); 0 = no hedging. */
  readonly hedgeBudget: number
  /** The shortest a read waits for its node before it is hedged. */
  readonly hedgeMinDelayMs: number
  readonly logLevel: LogLevel
  /** Serve the four optional verify/debug routes; otherwise they answer 403. */
  readonly exposeOptionalRoutes: boolean
  /** The Prometheus listener's port (§10); undefined when EDGE_API_METRICS_PORT is off. */
  readonly metricsPort: number | undefined
  readonly metricsHost: string
  /** OpenTelemetry tracing (docs/tracing.md); undefined when it is off, as by default. */
  readonly tracing: TracingSettings | undefined
  /** Client identity, CORS, blocked routes and the per-client limit (src/edge-settings.ts). */
  readonly edge: EdgeSettings
  /** Things the operator should know about how the config was read (logged at boot). */
  readonly warnings: readonly string[]
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
  const integer = (key: ConfigKey, min: number, max: number, or = ''): number => {
    const text = read(key) as string
    const n = Number(text)
    if (!/^\d+$/.test(text) || n < min || n > max) throw invalid(key, `must be an integer from ${min} to ${max}${or}`)
    return n
  }

  const boolean = (key: ConfigKey): boolean => {
    const text = read(key)
    if (text !== 'true' && text !== 'false') throw invalid(key, 'must be true or false')
    return text === 'true'
  }

  const warnings: string[] = []
  const chainRestUrls = resolveChainRestUrls(read('CHAIN_REST_URL'), read('CHAIN_GRPC_URL'), warnings, invalid)

  const listenHost = (key: ConfigKey, text: string): string => {
    if (isIP(text) === 0 && !/^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(text)) {
      throw invalid(key, 'must be an IP address or a host name to listen on')
    }
    return text
  }
  const host = listenHost('EDGE_API_HOST', read('EDGE_API_HOST') as string)
  const metricsHost = listenHost('EDGE_API_METRICS_HOST', read('EDGE_API_METRICS_HOST') ?? host)
  // No port 0 here: Prometheus must be told where to scrape, so the port is always a known one.
  const metricsPort = read('EDGE_API_METRICS_PORT') === 'off'
    ? undefined
    : integer('EDGE_API_METRICS_PORT', 1, 65535, ', or off to serve no metrics')

  const logLevel = read('EDGE_API_LOG_LEVEL') as LogLevel
  if (!LOG_LEVELS.includes(logLevel)) throw invalid('EDGE_API_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`)

  const maxResponse = parseByteSize(read('EDGE_API_CHAIN_MAX_RESPONSE') as string)
  if (maxResponse === undefined || maxResponse < MIN_CHAIN_MAX_RESPONSE || maxResponse > MAX_CHAIN_MAX_RESPONSE) {
    throw invalid('EDGE_API_CHAIN_MAX_RESPONSE', `must be a number of bytes with an optional KiB or MiB suffix (example: 16MiB), from ${formatByteSize(MIN_CHAIN_MAX_RESPONSE)} to ${formatByteSize(MAX_CHAIN_MAX_RESPONSE)}`)
  }

  const cacheBytes = parseByteSize(read('EDGE_API_CACHE_SIZE') as string)
  if (cacheBytes === undefined || cacheBytes > MAX_CACHE_SIZE) {
    throw invalid('EDGE_API_CACHE_SIZE', `must be a number of bytes with an optional KiB or MiB suffix (example: 64MiB), at most ${formatByteSize(MAX_CACHE_SIZE)}, or 0 for no answer cache`)
  }

  const hedge = read('EDGE_API_HEDGE') as string
  const percent = /^\d{1,2}(\.\d{1,2})?%$/.test(hedge) ? Number(hedge.slice(0, -1)) : NaN
  if (hedge !== 'off' && !(percent > 0 && percent <= MAX_HEDGE_PERCENT)) {
    throw invalid('EDGE_API_HEDGE', `must be the most reads hedged as a percentage above 0 and at most ${MAX_HEDGE_PERCENT}% (example: 10%), or off`)
  }

  return {
    chainRestUrls,
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
    chainMaxResponseBytes: maxResponse,
    cacheBytes,
    maxNodeLag: integer('EDGE_API_MAX_NODE_LAG', 0, MAX_NODE_LAG),
    headMaxAgeMs: duration('EDGE_API_HEAD_MAX_AGE', (ms) => ms > 0 && ms <= MAX_HEAD_MAX_AGE_MS ? undefined : `must be greater than 0 and at most ${formatDuration(MAX_HEAD_MAX_AGE_MS)}`),
    shedDelayMs: duration('EDGE_API_SHED_DELAY', (ms) => ms === 0 || (ms >= MIN_SHED_DELAY_MS && ms <= MAX_SHED_DELAY_MS) ? undefined : `must be 0 (no delay-based shedding) or from ${formatDuration(MIN_SHED_DELAY_MS)} to ${formatDuration(MAX_SHED_DELAY_MS)}`),
    hedgeBudget: hedge === 'off' ? 0 : percent / 100,
    hedgeMinDelayMs: duration('EDGE_API_HEDGE_MIN_DELAY', (ms) => ms > 0 && ms <= MAX_HEDGE_MIN_DELAY_MS ? undefined : `must be greater than 0 and at most ${formatDuration(MAX_HEDGE_MIN_DELAY_MS)}`),
    logLevel,
    exposeOptionalRoutes: boolean('EDGE_API_EXPOSE_OPTIONAL_ROUTES'),
    metricsPort,
    metricsHost,
    tracing: readTracingSettings(env, warnings),
    ...readStoreSettings(read),
    edge: readEdgeSettings({ read, invalid }),
    warnings
  }
}

function resolveChainRestUrls (
  rest: string | undefined,
  grpc: string | undefined,
  warnings: string[],
  invalid: (key: ConfigKey, allowed: string) => ConfigError
): string[] {
  if (rest !== undefined) {
    const entries = rest.split(',').map((entry) => entry.trim())
    const several = entries.length > 1
    const urls = entries.map((entry) => {
      const url = baseUrl(entry)
      if (url === undefined) {
        throw invalid('CHAIN_REST_URL', 'must be an http:// or https:// base URL without query or fragment (example: http://node:1317), ' +
          `or several separated by commas (http://a:1317,http://b:1317)${several ? `; ${JSON.stringify(entry)} is not` : ''}`)
      }
      return url
    })
    const repeated = urls.find((url, i) => urls.indexOf(url) !== i)
    if (repeated !== undefined) throw invalid('CHAIN_REST_URL', `lists ${repeated} twice; each node once`)
    return urls
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
  return [derived]
}

/** The normalised base URL (no trailing slash), or undefined when it is not an http(s) base URL. */
function baseUrl (text: string): string | undefined {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return undefined
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') return undefined
  return url.href.replace(/\/+$/, '')
}
