import { keyedHash, randomHashKey, type HashKey } from './keyed-hash.js'

// Each client's share of the replica, in bounded memory whatever the number of distinct clients
// (a million IPv6 addresses cost nothing more than one): requests in flight per client in a
// count-min sketch (ROWS rows of WIDTH counters, each client hashed to one counter a row; its
// count is the least of its counters, which over-counts only when another client shares every
// one of them: (1/WIDTH)^ROWS, by chance: the counters are chosen by a hash keyed by a secret
// of this process, keyed-hash.ts, so no one can choose addresses that share a victim's), and the number of clients active within the last RECENT_TICKS
// samples estimated from the first row (linear counting). A client is over its share when it
// has more requests in flight than the replica's requests in flight per active client: a lone
// client never is (work-conserving), and a polite client that sends a request now and then
// keeps its share while it waits between them.

export const WIDTH = 4096
/** Two rows: the keyed hash's two 32-bit words. */
export const ROWS = 2
/**
 * A client counts as active for this many samples (of 100 ms, 10 s) after its last request:
 * long enough that polite clients starved by a heavy one (a request every few seconds) still
 * count, so the heavy one stays over its share (measured: with 1 s, a closed loop of 1024
 * connections pushed twenty polite clients out of the count, and was then refused as the
 * replica's own overload, with unheld 503s, instead of as its excess).
 */
export const RECENT_TICKS = 100

/**
 * A client far over its share has more in flight than FAR_OVER times the other active
 * clients' mean (at least one), and more than FAR_OVER_FLOOR: a scraper's hundreds of
 * connections are; a page that loads five routes at once, beside clients with one request
 * each in flight, is not; a lone client never is.
 */
export const FAR_OVER = 4
export const FAR_OVER_FLOOR = 8

/** A request's place in the sketch, kept to count it out when it ends. */
export type Slots = readonly number[]

export class FairShare {
  readonly #key: HashKey
  readonly #counts = new Int32Array(WIDTH * ROWS)
  // The sample each counter of the first row last had a request in.
  readonly #seen = new Int32Array(WIDTH).fill(-RECENT_TICKS - 1)
  #tick = 0
  #inFlight = 0
  #heaviest = 0
  #recent = 0

  /** `key`: the hash's (tests give one to know where a client lands); a random one of its own by default. */
  constructor (key: HashKey = randomHashKey()) {
    this.#key = key
  }

  /** Where `client`'s requests are counted: one counter a row, each from one word of its keyed hash. */
  slotsOf (client: string): Slots {
    const [first, second] = keyedHash(client, this.#key)
    return [first % WIDTH, WIDTH + (second % WIDTH)]
  }

  /** A request of the client at `slots` starts. */
  start (slots: Slots): void {
    for (const slot of slots) this.#counts[slot] = (this.#counts[slot] as number) + 1
    const first = slots[0] as number
    if ((this.#seen[first] as number) < this.#tick - RECENT_TICKS) this.#recent++
    this.#seen[first] = this.#tick
    this.#inFlight++
  }

  /** A request of the client at `slots` has ended. */
  end (slots: Slots): void {
    for (const slot of slots) this.#counts[slot] = (this.#counts[slot] as number) - 1
    this.#inFlight--
  }

  /** Requests in flight of the client at `slots` (never fewer than it has). */
  inFlightOf (slots: Slots): number {
    let least = Infinity
    for (const slot of slots) least = Math.min(least, this.#counts[slot] as number)
    return least
  }

  /** Requests in flight, all clients. */
  get inFlight (): number {
    return this.#inFlight
  }

  /** Distinct clients with a request within the last 10 s (estimated: exact while few, within a few % up to thousands). */
  get activeClients (): number {
    const empty = WIDTH - this.#recent
    return empty === 0 ? Math.round(WIDTH * Math.log(WIDTH)) : Math.round(-WIDTH * Math.log(empty / WIDTH))
  }

  /**
   * The fair share: requests in flight per active client, and never less than one: a client
   * with one request at a time is never over it, however many idle clients share the mean.
   */
  get share (): number {
    return Math.max(1, this.#inFlight / Math.max(1, this.activeClients))
  }

  /** Whether the client at `slots` has more in flight than its share. */
  overShare (slots: Slots): boolean {
    return this.inFlightOf(slots) > this.share
  }

  /** Whether the client at `slots` is far over its share (FAR_OVER). */
  farOverShare (slots: Slots): boolean {
    const others = this.activeClients - 1
    if (others < 1) return false
    const own = this.inFlightOf(slots)
    const othersMean = Math.max(1, (this.#inFlight - own) / others)
    return own > Math.max(FAR_OVER_FLOOR, FAR_OVER * othersMean)
  }

  /** Whether the last sample saw a client over its share: refusals are then that client's, never the others'. */
  get uneven (): boolean {
    return this.#heaviest > this.share
  }

  /** Moves to the next sample (every 100 ms): forgets clients idle for RECENT_TICKS, finds the heaviest (a scan: never per request). */
  sample (): void {
    this.#tick++
    let heaviest = 0
    let recent = 0
    for (let i = 0; i < WIDTH; i++) {
      const count = this.#counts[i] as number
      heaviest = Math.max(heaviest, count)
      // A request still in flight keeps its client active.
      if (count !== 0) this.#seen[i] = this.#tick
      if ((this.#seen[i] as number) >= this.#tick - RECENT_TICKS) recent++
    }
    this.#heaviest = heaviest
    this.#recent = recent
  }
}
