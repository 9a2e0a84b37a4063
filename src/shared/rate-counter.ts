import type { SharedStore } from './store.js'

// The per-client limit counted across the pool (EDGE_API_RATE_LIMIT with EDGE_API_REDIS_URL):
// one token bucket per client in the store, as GCRA (the generic cell rate algorithm: one
// number per client, the time its bucket is full again), taken in one Lua call so that
// replicas racing for one client's last token never both get it. The store's clock times it
// (TIME), so replicas' clocks need not agree. A key expires when its bucket is full again:
// an idle client costs the store nothing.

export const RATE_PREFIX = 'edge-api:1:rate:'

/** A bucket's answer: taken, with the ms until the bucket is full again; or refused, with the ms until one more token. */
export interface Take {
  readonly taken: boolean
  readonly ms: number
}

/** Where tokens are taken: the pool's store, or (rate-limit.ts) this replica alone. */
export interface RateCounter {
  /** One token of `client`'s bucket, refilled one per `intervalMs`, holding `toleranceMs / intervalMs` tokens; undefined: no answer in time. */
  take (client: string, intervalMs: number, toleranceMs: number): Promise<Take | undefined>
}

const GCRA = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local full = tonumber(redis.call('GET', KEYS[1])) or now
if full < now then full = now end
local after = full + interval - now
if after > tolerance then return {0, math.ceil(after - tolerance)} end
redis.call('SET', KEYS[1], string.format('%.3f', full + interval), 'PX', math.ceil(after))
return {1, math.ceil(after)}
`

export class PoolRateCounter implements RateCounter {
  readonly #store: SharedStore

  constructor (store: SharedStore) {
    this.#store = store
  }

  async take (client: string, intervalMs: number, toleranceMs: number): Promise<Take | undefined> {
    const reply = await this.#store.evaluate('count', GCRA, [RATE_PREFIX + client], [String(intervalMs), String(toleranceMs)])
    if (!Array.isArray(reply)) return undefined
    return { taken: reply[0] === 1, ms: Number(reply[1]) }
  }
}
