import { isIP } from 'node:net'
import { formatDuration, parseDuration } from './duration.js'
import type { SettingReader as Reader } from './config/setting-reader.js'

// The settings of the public edge (docs/clients-and-limits.md): who a client is, which
// origins may read us from a browser, which routes are blocked, and the optional per-client
// limit. config.ts reads them through readEdgeSettings, with its reader (src/config/setting-reader.ts).

export type EdgeSettingKey = 'EDGE_API_TRUSTED_PROXIES' | 'EDGE_API_CORS_ORIGINS' | 'EDGE_API_BLOCKED_ROUTES' | 'EDGE_API_RATE_LIMIT'
type SettingReader = Reader<EdgeSettingKey>

/** A token bucket per client: `burst` requests at once, refilled at `requests` per `windowMs`. */
export interface RateLimit {
  readonly requests: number
  readonly windowMs: number
  readonly burst: number
}

export interface EdgeSettings {
  /** Addresses, CIDRs and proxy-addr's names (loopback, linklocal, uniquelocal) whose X-Forwarded-For is believed; empty = none. */
  readonly trustedProxies: readonly string[]
  /** '*' (any origin), the origins allowed, or undefined (CORS off). */
  readonly corsOrigins: '*' | readonly string[] | undefined
  /** Route prefixes below /v1, as segments ('*' matches any one segment), answered 403. */
  readonly blockedRoutes: ReadonlyArray<readonly string[]>
  /** The per-client limit; undefined = none. */
  readonly rateLimit: RateLimit | undefined
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal']
export const MAX_RATE_REQUESTS = 1_000_000
export const MIN_RATE_WINDOW_MS = 1000
export const MAX_RATE_WINDOW_MS = 86_400_000

/** The entries of a list separated by commas and/or spaces. */
const entries = (text: string | undefined): string[] => text === undefined ? [] : text.split(/[\s,]+/).filter((entry) => entry !== '')

export function readEdgeSettings (settings: SettingReader): EdgeSettings {
  return {
    trustedProxies: trustedProxies(settings),
    corsOrigins: corsOrigins(settings),
    blockedRoutes: blockedRoutes(settings),
    rateLimit: rateLimit(settings)
  }
}

function trustedProxies ({ read, invalid }: SettingReader): string[] {
  const list = entries(read('EDGE_API_TRUSTED_PROXIES'))
  for (const entry of list) {
    if (!PROXY_NAMES.includes(entry) && !isAddressOrCidr(entry)) {
      throw invalid('EDGE_API_TRUSTED_PROXIES', `must be addresses or CIDRs (example: 10.0.0.0/8,127.0.0.1) or ${PROXY_NAMES.join(', ')}; ${JSON.stringify(entry)} is none`)
    }
  }
  return list
}

function isAddressOrCidr (text: string): boolean {
  const [address = '', prefix, ...more] = text.split('/')
  const family = isIP(address)
  if (family === 0 || more.length > 0) return false
  if (prefix === undefined) return true
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)
}

function corsOrigins ({ read, invalid }: SettingReader): '*' | string[] | undefined {
  const text = read('EDGE_API_CORS_ORIGINS') as string
  if (text === 'off') return undefined
  if (text === '*') return '*'
  const list = entries(text)
  for (const entry of list) {
    if (!isOrigin(entry)) {
      throw invalid('EDGE_API_CORS_ORIGINS', `must be *, off, or origins such as https://app.example.com,http://localhost:3000; ${JSON.stringify(entry)} is not an origin`)
    }
  }
  return list
}

function isOrigin (text: string): boolean {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text && /^[a-z0-9.:[\]-]+$/.test(url.host)
  } catch {
    return false
  }
}

function blockedRoutes ({ read, invalid }: SettingReader): string[][] {
  return entries(read('EDGE_API_BLOCKED_ROUTES')).map((entry) => {
    const segments = entry.replace(/^\/?(v1\/)?/, '').replace(/\/$/, '').split('/')
    if (!segments.every((segment) => /^[A-Za-z0-9._~-]+$|^\*$/.test(segment))) {
      throw invalid('EDGE_API_BLOCKED_ROUTES', `must be route prefixes below /v1 separated by spaces or commas (example: "poc-batches training", or epochs/*/participants); ${JSON.stringify(entry)} is not one`)
    }
    return segments
  })
}

function rateLimit ({ read, invalid }: SettingReader): RateLimit | undefined {
  const text = read('EDGE_API_RATE_LIMIT') as string
  if (text === 'off') return undefined
  const match = /^(\d+)\/([0-9a-z.]+)(?:\s+burst=(\d+))?$/.exec(text)
  const requests = Number(match?.[1])
  const windowMs = parseDuration(match?.[2] ?? '') ?? NaN
  const burst = match?.[3] === undefined ? requests : Number(match[3])
  const within = (n: number, min: number, max: number): boolean => n >= min && n <= max
  if (!within(requests, 1, MAX_RATE_REQUESTS) || !within(burst, 1, MAX_RATE_REQUESTS) || !within(windowMs, MIN_RATE_WINDOW_MS, MAX_RATE_WINDOW_MS)) {
    throw invalid('EDGE_API_RATE_LIMIT', 'must be off, or requests per client per window with an optional burst: ' +
      `600/1m, or 10/1m burst=600 (requests and burst 1 to ${MAX_RATE_REQUESTS}, window ${formatDuration(MIN_RATE_WINDOW_MS)} to ${formatDuration(MAX_RATE_WINDOW_MS)})`)
  }
  return { requests, windowMs, burst }
}
