import { LRUCache } from 'lru-cache'

/** A built answer, ready to send: its body bytes and the headers that go with them. */
export interface CachedAnswer {
  readonly body: Buffer
  readonly contentType: string
  readonly etag: string
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

// An entry costs more than its body: the key, the headers and lru-cache's own bookkeeping
// (a few arrays' slots per entry). 256 bytes each is a round, generous figure for these.
const ENTRY_OVERHEAD_BYTES = 256

/**
 * The answers the replicas of a pool share (src/shared/shared-answers.ts implements it): declared
 * here, where it is used, so that the cache knows nothing of the store behind it.
 */
export interface PoolAnswers {
  /** The answer another replica built for `key`, if the pool has it within a bounded wait. */
  find (key: string): Promise<CachedAnswer | undefined>
  /** Offers an answer this replica built to the pool; never awaited by a client. */
  keep (key: string, answer: CachedAnswer): void
  /** Says this replica's build of `key` will not be offered (an error): those waiting for it build their own. */
  release (key: string): void
}

/**
 * Built answers by key (route, parameters and height), bounded in bytes: the sum of every
 * entry's body, key and overhead stays within `maxBytes`, least recently used out first.
 * lru-cache counts the size itself (maxSize + sizeCalculation) and never holds an entry
 * larger than the whole bound. Only 200s are ever put here: errors are never cached.
 */
export class AnswerCache {
  readonly #lru: LRUCache<string, CachedAnswer>
  readonly observer: CacheObserver | undefined
  /** The pool's answers behind this replica's (the shared tier, EDGE_API_REDIS_URL); undefined without it. */
  shared: PoolAnswers | undefined

  constructor (maxBytes: number, observer?: CacheObserver) {
    this.observer = observer
    this.#lru = new LRUCache<string, CachedAnswer>({
      maxSize: maxBytes,
      maxEntrySize: maxBytes,
      sizeCalculation: (answer, key) => answer.body.length + key.length * 2 + answer.etag.length + ENTRY_OVERHEAD_BYTES,
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

  /** Bytes held, as counted against the bound. */
  get bytes (): number {
    return this.#lru.calculatedSize
  }

  get entries (): number {
    return this.#lru.size
  }
}
