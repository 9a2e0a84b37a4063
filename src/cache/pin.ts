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

  async latest (request: FastifyRequest, reply: FastifyReply): Promise<ChainReader> {
    // The answer chosen depends on the header, its errors too: an HTTP cache keys them by it (RFC 9110 §12.5.5).
    // Added to what is there: CORS with a list of origins varies by Origin too.
    const vary = reply.getHeader('vary')
    reply.header('vary', vary === undefined ? MIN_HEIGHT_HEADER : `${String(vary)}, ${MIN_HEIGHT_HEADER}`)
    reply.header('cache-control', LATEST_CACHE_CONTROL)
    const context = readContextOf(request)
    // A malformed minimum is a 400 before any chain request. With one, the height is known
    // before the first read even with one node and no cache, so a hit, a 304 and a built
    // answer are all at it or later.
    const minimum = minimumHeight(request.headers)
    const reader = minimum !== undefined
      ? await this.#minHeights.reader(minimum, context)
      : this.#cache === undefined ? await this.#chain.reader(context) : await this.#chain.latest(context)
    return this.#kept(reader)
  }

  fixed (request: FastifyRequest, reply: FastifyReply): ChainReader {
    reply.header('cache-control', IMMUTABLE_CACHE_CONTROL)
    return this.#kept(this.#chain.unpinned(readContextOf(request)))
  }

  #kept (reader: ChainReader): ChainReader {
    return this.#cache === undefined ? reader : withFixedReads(reader, this.#cache)
  }
}
