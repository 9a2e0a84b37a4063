import { formatDuration, parseDuration } from '../duration.js'
import { ConfigError } from '../errors.js'
import type { SettingReader } from './setting-reader.js'

// The shared tier's settings (docs/shared-tier.md), read by loadConfig (src/config.ts). Each
// may hold a secret: no error repeats its value.

export interface StoreSettings {
  /** The shared tier's store, redis:// or rediss:// (docs/shared-tier.md); undefined = none, each replica on its own. */
  readonly redisUrl: string | undefined
  /** The store's password when the URL carries none (EDGE_API_REDIS_PASSWORD); undefined: the URL's, or none. */
  readonly redisPassword: string | undefined
  /** The key shared answers are signed with (HMAC-SHA256); undefined: digested only. */
  readonly redisSecret: string | undefined
  /** The deadline of a store command a request waits on (EDGE_API_REDIS_TIMEOUT); background writes get ten times it. */
  readonly redisTimeoutMs: number
}

// A store that takes longer than this is no faster than the chain node it stands in front of.
export const MAX_REDIS_TIMEOUT_MS = 1000

/** The same on every replica of a pool; long enough not to be guessed. */
export const MIN_REDIS_SECRET_LENGTH = 16

export type StoreSettingKey = 'EDGE_API_REDIS_URL' | 'EDGE_API_REDIS_PASSWORD' | 'EDGE_API_REDIS_SECRET' | 'EDGE_API_REDIS_TIMEOUT'

/** The four settings (unset and empty are undefined); throws ConfigError. */
export function readStoreSettings ({ read }: SettingReader<StoreSettingKey>): StoreSettings {
  return {
    redisUrl: redisUrl(read('EDGE_API_REDIS_URL')),
    redisPassword: read('EDGE_API_REDIS_PASSWORD'),
    redisSecret: redisSecret(read('EDGE_API_REDIS_SECRET')),
    // SETTINGS gives it a default: read() never leaves it unset.
    redisTimeoutMs: redisTimeout(read('EDGE_API_REDIS_TIMEOUT') as string)
  }
}

function redisTimeout (text: string): number {
  const ms = parseDuration(text)
  if (ms !== undefined && ms >= 1 && ms <= MAX_REDIS_TIMEOUT_MS) return ms
  throw new ConfigError('EDGE_API_REDIS_TIMEOUT', `EDGE_API_REDIS_TIMEOUT=${text} is invalid: must be a duration from 1ms to ${formatDuration(MAX_REDIS_TIMEOUT_MS)} (example: 10ms)`)
}

/**
 * The store's URL as given, when it is one the client can connect with: redis:// or
 * rediss://, a host, an optional port, user and password, and an optional database number
 * as its path.
 */
function redisUrl (text: string | undefined): string | undefined {
  if (text === undefined) return undefined
  const invalid = (): ConfigError => new ConfigError('EDGE_API_REDIS_URL',
    'EDGE_API_REDIS_URL is invalid (its value is not shown: it may hold a password): ' +
    'must be redis://[user:password@]host[:port][/db] or rediss://… (example: redis://redis:6379)')
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw invalid()
  }
  if ((url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '' || url.search !== '' || url.hash !== '' || !/^\/?(\d{1,5})?$/.test(url.pathname)) {
    throw invalid()
  }
  return text
}

function redisSecret (text: string | undefined): string | undefined {
  if (text === undefined || text.length >= MIN_REDIS_SECRET_LENGTH) return text
  throw new ConfigError('EDGE_API_REDIS_SECRET', `EDGE_API_REDIS_SECRET is too short (its value is not shown): at least ${MIN_REDIS_SECRET_LENGTH} characters, the same on every replica (example: openssl rand -base64 32)`)
}
