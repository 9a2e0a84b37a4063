import { formatByteSize } from './byte-size.js'
import { readChainSettings, type ChainSettings } from './config/chain-settings.js'
import { readListenerSettings, type ListenerSettings } from './config/listener-settings.js'
import { settingReader, type SettingReader } from './config/setting-reader.js'
import { readStoreSettings, type StoreSettings } from './config/store-settings.js'
import { readVerificationSettings, type VerificationSettings } from './config/verification-settings.js'
import { readWaitingLimits, type WaitingLimits } from './config/waiting-settings.js'
import { formatDuration } from './duration.js'
import { readEdgeSettings, type EdgeSettings } from './edge-settings.js'
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
 * variable: a row here, its rule in loadConfig or the group of settings it belongs to
 * (src/config/), and the copies the test names.
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
  EDGE_API_RATE_LIMIT: { default: 'off' },
  /** Held long-polls and event streams, counted together, open at once per client and on the replica (docs/waiting.md). */
  EDGE_API_WAITING_PER_CLIENT: { default: '1024' },
  EDGE_API_WAITING_MAX: { default: '10000' },
  // Verified reads (src/config/verification-settings.ts, docs/verified-reads.md).
  /** off, headers, answers or strict; anything but off needs the trust root below. */
  EDGE_API_VERIFICATION: { default: 'off' },
  /** The trust root: a header's height and hash, from a source other than the nodes verified. */
  EDGE_API_TRUST_HEIGHT: { unset: 'none' },
  EDGE_API_TRUST_HASH: { unset: 'none' },
  /** How long a verified header vouches for what follows; below the chain's 21-day unbonding period. */
  EDGE_API_TRUSTING_PERIOD: { default: '336h' },
  /** Each node's CometBFT RPC base URL, in CHAIN_REST_URL's order: the newest header verified with its seen commit (V = L - 1). */
  EDGE_API_CHAIN_RPC_URL: { unset: 'none' }
} as const satisfies Record<string, Setting>

export type ConfigKey = keyof typeof SETTINGS

/** Each setting's default (undefined: required, or derived). */
export const CONFIG_DEFAULTS = Object.fromEntries(
  Object.entries(SETTINGS).map(([key, setting]: [string, Setting]) => [key, setting.default])
) as Readonly<Record<ConfigKey, string | undefined>>
export type Env = Readonly<Record<string, string | undefined>>

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = typeof LOG_LEVELS[number]

// The answer cache's bound: 0 turns it off; 1 GiB is far beyond the answers of a few
// thousand keys a replica serves, and must stay well within the process's memory.
export const MAX_CACHE_SIZE = 1024 * 1024 * 1024
// Below 5 ms the target is within the event-loop delay histogram's 10 ms resolution's noise
// and sheds a replica that keeps up; beyond 10 s no client is still waiting.
export const MIN_SHED_DELAY_MS = 5
export const MAX_SHED_DELAY_MS = 10_000

export interface Config extends ListenerSettings, ChainSettings, StoreSettings {
  /** The answer cache's bound in bytes; 0 = no answer cache. */
  readonly cacheBytes: number
  /** The event-loop delay, ms, that /v1's load shedding holds the replica at under overload; 0 = no delay-based shedding. */
  readonly shedDelayMs: number
  readonly logLevel: LogLevel
  /** Serve the four optional verify/debug routes; otherwise they answer 403. */
  readonly exposeOptionalRoutes: boolean
  /** OpenTelemetry tracing (docs/tracing.md); undefined when it is off, as by default. */
  readonly tracing: TracingSettings | undefined
  /** Client identity, CORS, blocked routes and the per-client limit (src/edge-settings.ts). */
  readonly edge: EdgeSettings
  /** The caps of held long-polls and event streams together (src/config/waiting-settings.ts). */
  readonly waiting: WaitingLimits
  /** Verified reads: the mode, the trust root, the trusting period (src/config/verification-settings.ts). */
  readonly verification: VerificationSettings
  /** Things the operator should know about how the config was read (logged at boot). */
  readonly warnings: readonly string[]
}

/** Reads the configuration from an environment object. Pure: no process access, throws ConfigError. */
export function loadConfig (env: Env): Config {
  const settings = settingReader(env, CONFIG_DEFAULTS)
  const warnings: string[] = []
  const chain = readChainSettings(settings, warnings)
  return {
    ...chain,
    ...readListenerSettings(settings),
    cacheBytes: settings.byteSize('EDGE_API_CACHE_SIZE', 0, MAX_CACHE_SIZE,
      `must be a number of bytes with an optional KiB or MiB suffix (example: 64MiB), at most ${formatByteSize(MAX_CACHE_SIZE)}, or 0 for no answer cache`),
    shedDelayMs: settings.duration('EDGE_API_SHED_DELAY', (ms) => ms === 0 || (ms >= MIN_SHED_DELAY_MS && ms <= MAX_SHED_DELAY_MS) ? undefined : `must be 0 (no delay-based shedding) or from ${formatDuration(MIN_SHED_DELAY_MS)} to ${formatDuration(MAX_SHED_DELAY_MS)}`),
    logLevel: logLevel(settings),
    exposeOptionalRoutes: settings.boolean('EDGE_API_EXPOSE_OPTIONAL_ROUTES'),
    tracing: readTracingSettings(env, warnings),
    ...readStoreSettings(settings),
    edge: readEdgeSettings(settings),
    waiting: readWaitingLimits(settings),
    verification: readVerificationSettings(settings, warnings, chain.chainRestUrls.length),
    warnings
  }
}

function logLevel ({ read, invalid }: SettingReader<ConfigKey>): LogLevel {
  const level = read('EDGE_API_LOG_LEVEL') as LogLevel
  if (!LOG_LEVELS.includes(level)) throw invalid('EDGE_API_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`)
  return level
}
