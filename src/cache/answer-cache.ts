import { LRUCache } from 'lru-cache'
import { tagOf } from './conditional.js'

/** A built answer, ready to send: its body bytes and the headers that go with them. */
export interface CachedAnswer {
  readonly body: Buffer
  readonly contentType: string
  /** The tag of its key (conditional.ts's tagOf); a pooled answer's is replaced by this replica's own. */
  readonly etag: string
  /** Its X-Verification (src/proven/), kept with it: a hit says what the miss that built it said. */
  readonly verification?: string | undefined
}

/**
 * How a cacheable read was answered: from the cache, by sharing an answer being built,
 * from the answers another replica built (shared: the shared tier), built (miss), or 304
 * from its ETag (revalidated).
 */
export type CacheResult = 'hit' | 'coalesced' | 'shared' | 'miss' | 'revalidated'

/** Told how each cacheable read was answered, and of every eviction (src/metrics/ counts them). */
export interface CacheObserver {
  cacheResult (route: string, result: CacheResult): void
  cacheEvicted (): void
}

/**
 * The answers the replicas of a pool share (src/shared/shared-answers.ts implements it): declared
 * here, where it is used, so that the cache knows nothing of the store behind it.
 */
export interface PoolAnswers {
  /** The answer another replica built for `key`, if the pool has it within a bounded wait. */
  find (key: string): Promise<CachedAnswer | undefined>
  /** Offers an answer this replica built to the pool; never awaited by a client. */
  keep (key: string, answer: CachedAnswer): void
  /**
   * The build this replica claimed will not be shared (an error, too large, not kept): waiters
   * on other replicas build themselves. Called for every build that does not keep().
   */
  release (key: string): void
}

/** A read that builds the answer to its key. */
export interface Build {
  /**
   * Ends the build with its answer (a 200), or undefined when it ended without one (an error,
   * its client gone): the reads waiting on it are answered or build their own. Only the first
   * call ends it; an answer that comes later still goes to this replica's cache.
   */
  finish (answer: CachedAnswer | undefined): void
}

/** What a lookup found: an answer to send, or the build this read runs. */
export type Lookup =
  | { readonly result: 'hit' | 'coalesced' | 'shared', readonly answer: CachedAnswer }
  | { readonly result: 'miss', readonly build: Build }

export interface AnswerCacheOptions {
  /** EDGE_API_CACHE_SIZE: the bound on the bytes held. */
  readonly maxBytes: number
  readonly observer?: CacheObserver | undefined
  /** The pool's answers behind this replica's (the shared tier, EDGE_API_REDIS_URL); undefined without it. */
  readonly pool?: PoolAnswers | undefined
}

/**
 * Content types this service's routes answer with: an answer from the pool with any other is
 * not served (whatever wrote it to the store, a browser must never get `text/html` from here).
 */
export const TRUSTED_CONTENT_TYPES: ReadonlySet<string> = new Set(['application/json; charset=utf-8', 'text/plain; charset=utf-8'])

// An entry costs more than its body: the key, the headers and lru-cache's own bookkeeping
// (a few arrays' slots per entry). 256 bytes each is a round, generous figure for these.
const ENTRY_OVERHEAD_BYTES = 256

/** An answer being built: the reads of its key that came meanwhile wait for it. */
interface Flight {
  readonly answer: Promise<CachedAnswer | undefined>
  land (answer: CachedAnswer | undefined): void
}

/**
 * The answer store: built answers by key (route, parameters and height), bounded in bytes, the
 * pool's behind them, and one single flight per key over both. The sum of every entry's body,
 * key and overhead stays within `maxBytes`, least recently used out first (lru-cache counts
 * it, and never holds an entry larger than the whole bound). An answer being built is held
 * only while its build runs: its flight ends when the build finishes, however it finishes.
 * Only 200s are ever put here: errors are never cached.
 */
export class AnswerCache {
  readonly #lru: LRUCache<string, CachedAnswer>
  readonly #pool: PoolAnswers | undefined
  readonly #flights = new Map<string, Flight>()
  readonly observer: CacheObserver | undefined

  constructor (options: AnswerCacheOptions) {
    this.observer = options.observer
    this.#pool = options.pool
    this.#lru = new LRUCache<string, CachedAnswer>({
      maxSize: options.maxBytes,
      maxEntrySize: options.maxBytes,
      sizeCalculation: (answer, key) => answer.body.length + key.length * 2 + answer.etag.length + (answer.verification?.length ?? 0) + ENTRY_OVERHEAD_BYTES,
      dispose: (_answer, _key, reason) => {
        if (reason === 'evict') this.observer?.cacheEvicted()
      }
    })
  }

  get (key: string): CachedAnswer | undefined {
    return this.#lru.get(key)
  }

  set (key: string, answer: CachedAnswer): void {
    this.#lru.set(key, answer)
  }

  /**
   * The answer to `key` from this replica's cache, from the read of this replica building it,
   * or from the pool (a bounded wait); else the build this read runs, which must be finished.
   */
  async lookup (key: string): Promise<Lookup> {
    const cached = this.#lru.get(key)
    if (cached !== undefined) return { result: 'hit', answer: cached }
    return this.lookupMissed(key)
  }

  /**
   * lookup() for a key just found missing from this replica's cache (get() was undefined, and
   * nothing was awaited since): the cache is not read again. A hit is answered without it.
   */
  async lookupMissed (key: string): Promise<Lookup> {
    const running = this.#flights.get(key)
    if (running !== undefined) {
      const answer = await running.answer
      // The build it waited for ended without an answer: it builds its own, alone.
      return answer !== undefined ? { result: 'coalesced', answer } : { result: 'miss', build: this.#build(key, undefined) }
    }
    const flight = this.#fly(key)
    // Without a pool, no await: a miss goes straight to its build.
    const pooled = this.#pool === undefined ? undefined : await this.#pooled(this.#pool, key)
    if (pooled === undefined) return { result: 'miss', build: this.#build(key, flight) }
    this.#lru.set(key, pooled)
    flight.land(pooled)
    return { result: 'shared', answer: pooled }
  }

  /** Bytes held, as counted against the bound. */
  get bytes (): number {
    return this.#lru.calculatedSize
  }

  get entries (): number {
    return this.#lru.size
  }

  /** Answers being built: each ends with its build, so at most one per read in progress. */
  get building (): number {
    return this.#flights.size
  }

  // The pool's answer as this replica would send it: its own tag, a content type it sends.
  async #pooled (pool: PoolAnswers, key: string): Promise<CachedAnswer | undefined> {
    // A pool that fails says nothing: the read builds its answer.
    const found = await pool.find(key).catch(() => undefined)
    if (found === undefined || !TRUSTED_CONTENT_TYPES.has(found.contentType)) return undefined
    return { body: found.body, contentType: found.contentType, etag: tagOf(key), verification: found.verification }
  }

  #fly (key: string): Flight {
    let land!: (answer: CachedAnswer | undefined) => void
    const flight: Flight = {
      answer: new Promise((resolve) => { land = resolve }),
      land: (answer) => {
        if (this.#flights.get(key) === flight) this.#flights.delete(key)
        land(answer)
      }
    }
    this.#flights.set(key, flight)
    return flight
  }

  #build (key: string, flight: Flight | undefined): Build {
    let finished = false
    return {
      finish: (answer) => {
        if (answer !== undefined) this.#lru.set(key, answer)
        if (finished) return
        finished = true
        if (answer !== undefined) this.#pool?.keep(key, answer)
        else this.#pool?.release(key)
        flight?.land(answer)
      }
    }
  }
}
