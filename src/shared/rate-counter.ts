import type { SharedStore } from './store.js'

// The per-client limit counted across the pool (EDGE_API_RATE_LIMIT with EDGE_API_REDIS_URL):
// one token bucket per client in the store, as GCRA (the generic cell rate algorithm: one
// number per client, the time its bucket is full again), taken in one Lua call so that
// replicas racing for one client's last token never both get it. The store's clock times it
// (TIME), so replicas' clocks need not agree. A key expires when its bucket is full again:
// an idle client costs the store nothing.

/**
 * A client's bucket in the store, for `network`'s chain: a store shared by pools of two chains
 * counts a client apart on each. Version 2: version 1 was one bucket for every chain (in a
 * rollout, the old and the new replicas count apart: docs/clients-and-limits.md).
 */
export function rateKey (network: string, client: string): string {
  return `edge-api:2:rate:${network}:${client}`
}

/**
 * A bucket's answer: taken or not, the tokens left after it (`remaining`, 0 when refused), and
 * the ms until one more is there (`moreMs`: after a refusal, until the client may be served).
 */
export interface Take {
  readonly taken: boolean
  readonly remaining: number
  readonly moreMs: number
}

/** Where tokens are taken: the pool's store, or (rate-limit.ts) this replica alone. */
export interface RateCounter {
  /** One token of `client`'s bucket, refilled one per `intervalMs`, holding `toleranceMs / intervalMs` tokens; undefined: no answer in time. */
  take (client: string, intervalMs: number, toleranceMs: number): Promise<Take | undefined>
}

/**
 * The store keeps a bucket's time to the µs (a 3/1s bucket's 666.6667 ms as 666.667): a token
 * due within this much is there now, so that the third of three is neither refused nor
 * counted as missing (r one low) for a rounding.
 */
export const SLACK_MS = 0.001

/**
 * GCRA's answer (the local counter's; GCRA below is the same in Lua): `after`, the ms from
 * now until the bucket is full again once this request is counted. Taken when that is within
 * the tolerance; the tokens left are those that fit in what remains of it, and the next one
 * comes when the time until full drops by what is over a whole token.
 */
export function gcraTake (after: number, intervalMs: number, toleranceMs: number): Take {
  if (after > toleranceMs + SLACK_MS) return { taken: false, remaining: 0, moreMs: after - toleranceMs }
  const remaining = Math.floor((toleranceMs + SLACK_MS - after) / intervalMs)
  return { taken: true, remaining, moreMs: after - toleranceMs + (remaining + 1) * intervalMs }
}

const GCRA = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local slack = tonumber(ARGV[3])
local full = tonumber(redis.call('GET', KEYS[1])) or now
if full < now then full = now end
local after = full + interval - now
if after > tolerance + slack then return {0, 0, math.ceil(after - tolerance)} end
redis.call('SET', KEYS[1], string.format('%.3f', full + interval), 'PX', math.ceil(after))
local remaining = math.floor((tolerance + slack - after) / interval)
return {1, remaining, math.ceil(after - tolerance + (remaining + 1) * interval)}
`

export class PoolRateCounter implements RateCounter {
  readonly #store: SharedStore
  readonly #network: () => string | undefined

  /** `network`: the chain's, once its nodes have named it (shared-tier.ts); until then nothing is counted in the store. */
  constructor (store: SharedStore, network: () => string | undefined) {
    this.#store = store
    this.#network = network
  }

  async take (client: string, intervalMs: number, toleranceMs: number): Promise<Take | undefined> {
    const network = this.#network()
    if (network === undefined) return undefined
    const reply = await this.#store.evaluate('count', GCRA, [rateKey(network, client)], [String(intervalMs), String(toleranceMs), String(SLACK_MS)])
    if (!Array.isArray(reply)) return undefined
    // Redis answers a Lua number as an integer: the ms rounded up, which the header's seconds are anyway.
    return { taken: reply[0] === 1, remaining: Number(reply[1]), moreMs: Number(reply[2]) }
  }
}
