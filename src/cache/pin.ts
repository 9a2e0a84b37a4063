import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ChainClient } from '../chain/client.js'
import type { ChainReader } from '../chain/types.js'
import type { AnswerCache } from './answer-cache.js'
import { withFixedReads } from './fixed-reads.js'
import { MIN_HEIGHT_HEADER, minimumHeight, type MinHeights } from './min-height.js'
import { readContextOf } from './read-context.js'

// Choosing the reader a cacheable answer is read with (docs/heights-and-cache.md §4, §7).

export const LATEST_CACHE_CONTROL = 'no-cache'
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable'

export interface ReaderPinOptions {
  readonly chain: ChainClient
  /** Built answers; undefined when EDGE_API_CACHE_SIZE is 0. */
  readonly cache: AnswerCache | undefined
  readonly minHeights: MinHeights
}

/**
 * The reader of a latest-state or fixed answer. Every chain read of a latest-state answer is
 * pinned to one height: with the cache, the replica's head (ChainClient.latest); without it,
 * the fresh head if known, else the height its first read is answered at; with the client's
 * X-Min-Block-Height, that height or later (MinHeights). A fixed answer's reads are not
 * pinned: its path names its height. With the cache, the chain reads a height decides for
 * good are kept (fixed-reads.ts).
 */
export class ReaderPin {
  readonly #chain: ChainClient
  readonly #cache: AnswerCache | undefined
  readonly #minHeights: MinHeights

  constructor (options: ReaderPinOptions) {
    this.#chain = options.chain
    this.#cache = options.cache
    this.#minHeights = options.minHeights
  }

  /**
   * A latest-state answer's headers, set before its height is chosen: its errors have them too.
   * The answer chosen depends on the minimum height's header, so an HTTP cache keys them by it
   * (RFC 9110 §12.5.5); added to what varies it already (CORS with a list varies by Origin).
   */
  latestHeaders (reply: FastifyReply): void {
    const vary = reply.getHeader('vary')
    reply.header('vary', vary === undefined ? MIN_HEIGHT_HEADER : `${String(vary)}, ${MIN_HEIGHT_HEADER}`)
    reply.header('cache-control', LATEST_CACHE_CONTROL)
  }

  /**
   * The height a latest-state answer is served at when it is known without a wait: with the
   * cache, no minimum height asked and a fresh head (ChainHeads.latestNow). Undefined otherwise:
   * latest() then chooses it. A malformed minimum is a 400 here, before any chain request.
   */
  heightNow (request: FastifyRequest): number | undefined {
    if (minimumHeight(request.headers) !== undefined || this.#cache === undefined) return undefined
    return this.#chain.heads.latestNow()
  }

  /**
   * The height a proven answer is served at (its route atVerifiedHeight): the verified height V
   * when known and at least the client's minimum; undefined otherwise (then it is read as any
   * latest-state answer, and says it is not verified).
   */
  verifiedHeight (request: FastifyRequest): number | undefined {
    const verified = this.#chain.verified?.height
    const minimum = minimumHeight(request.headers)
    return verified === undefined || (minimum !== undefined && minimum > verified) ? undefined : verified
  }

  /** The reader of a latest-state answer at `height` (heightNow's): made only when the answer is built. */
  at (request: FastifyRequest, height: number): ChainReader {
    return this.#kept(this.#chain.at(height, readContextOf(request)))
  }

  /**
   * The reader of a latest-state answer whose height heightNow did not know. With a minimum,
   * the height is known before the first read even with one node and no cache, so a hit, a
   * 304 and a built answer are all at it or later.
   */
  async latest (request: FastifyRequest): Promise<ChainReader> {
    const context = readContextOf(request)
    const minimum = minimumHeight(request.headers)
    const reader = minimum !== undefined
      ? await this.#minHeights.reader(minimum, context)
      : this.#cache === undefined ? await this.#chain.reader(context) : await this.#chain.latest(context)
    return this.#kept(reader)
  }

  /** A fixed answer's header, set before it is read: its errors have it too. */
  fixedHeaders (reply: FastifyReply): void {
    reply.header('cache-control', IMMUTABLE_CACHE_CONTROL)
  }

  /** The reader of a fixed answer: unpinned, its path names its height; made only when the answer is built. */
  fixed (request: FastifyRequest): ChainReader {
    return this.#kept(this.#chain.unpinned(readContextOf(request)))
  }

  #kept (reader: ChainReader): ChainReader {
    return this.#cache === undefined ? reader : withFixedReads(reader, this.#cache)
  }
}
