import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify'
import type { ChainClient } from '../chain/client.js'
import type { ChainReader } from '../chain/types.js'
import type { AnswerCache, Build, CacheObserver, CacheResult, CachedAnswer } from './answer-cache.js'
import { answerKeyOf, keyAt, type KeyOf } from './answer-key.js'
import { VERIFICATION_HEADER } from '../proven/verification-header.js'
import { BLOCK_HEIGHT_HEADER, BodyTags, holdsAnswer, matchesTag, tagAnswer, tagOf } from './conditional.js'
import { MinHeights } from './min-height.js'
import { IMMUTABLE_CACHE_CONTROL, LATEST_CACHE_CONTROL, ReaderPin } from './pin.js'
import { decorateReadClient, readContextOf } from './read-context.js'
import { paramSpellings, routeClass, type RouteClass } from './route-classes.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** What the handler reads the chain with: pinned to the answer's height for latest-state routes. */
    chain: ChainReader
  }
  interface FastifyContextConfig {
    /**
     * A latest-state route whose answers are proven (src/proven/proven-answers.ts sets it with
     * EDGE_API_VERIFICATION answers or strict): read, cached and tagged at the verified height
     * V rather than the head, once V is known and meets the client's minimum.
     */
    atVerifiedHeight?: boolean
  }
}

export { BLOCK_HEIGHT_HEADER }
/** The response header saying how a cacheable answer was served (CacheResult). */
export const CACHE_HEADER = 'x-cache'

export interface AnswerCachingOptions {
  readonly chain: ChainClient
  /** Built answers; undefined when EDGE_API_CACHE_SIZE is 0 (pinning and ETags still apply). */
  readonly cache: AnswerCache | undefined
}

/** What a cacheable read carries from its preHandler to its onSend. */
interface CachedRead {
  /** The answer's key without its height (the route with its parameters). */
  readonly base: string
  readonly route: string
  /** A latest-state answer: without a height it is neither cached nor tagged by its key. */
  readonly latest: boolean
  /** Set when this read builds the answer (the cache missed). */
  build?: Build
}

/**
 * Pins, caches and tags /v1 answers by their route's class (src/cache/route-classes.ts): the
 * reader chosen by pin.ts, the ETag and 304 by conditional.ts, the answer from the store
 * (answer-cache.ts: local, pool, one single flight). The ETag and the cache key are (route,
 * parameters, height), so an If-None-Match with the current tag is a 304 and a repeated read
 * within the block a hit, both without a chain request. Only 200s are cached or tagged by key.
 */
export async function answerCaching (app: FastifyInstance, options: AnswerCachingOptions): Promise<void> {
  const hooks = new AnswerHooks(options)
  app.decorateRequest('chain', null as unknown as ChainReader)
  decorateReadClient(app)
  // Each route gets the hooks of its class, bound to it when it is added: a request pays only
  // for what its route needs, and no hook asks Fastify for the route's options (a getter that
  // builds an object on each read).
  app.addHook('onRoute', (route) => { hooks.wire(route) })
}

class AnswerHooks {
  readonly #chain: ChainClient
  readonly #cache: AnswerCache | undefined
  readonly #observer: CacheObserver | undefined
  readonly #pin: ReaderPin
  readonly #tags = new BodyTags()
  readonly #reads = new WeakMap<FastifyRequest, CachedRead>()

  constructor ({ chain, cache }: AnswerCachingOptions) {
    this.#chain = chain
    this.#cache = cache
    this.#observer = cache?.observer
    this.#pin = new ReaderPin({ chain, cache, minHeights: new MinHeights(chain) })
  }

  /**
   * Ahead of the route's own onSend hooks (Fastify's HEAD route ends its onSend with the body
   * dropped), after its own preHandlers: they check the input the schema cannot (a range, an
   * epoch 0), so a bad input is answered before the pin asks the chain anything (issue 33).
   */
  wire (route: RouteOptions): void {
    let answerClass: RouteClass | undefined
    for (const method of [route.method].flat()) {
      answerClass = routeClass(method === 'HEAD' ? 'GET' : method, route.url)
      if (answerClass === undefined) throw new Error(`${method} ${route.url} has no class in ROUTE_CLASSES (src/cache/route-classes.ts)`)
    }
    if (answerClass === 'latest' || answerClass === 'fixed') {
      const declared = Object.keys((route.schema?.querystring as { properties?: object } | undefined)?.properties ?? {})
      const keyOf = answerKeyOf(route.url, paramSpellings(route.url), declared)
      route.preHandler = [...[route.preHandler ?? []].flat(), this.#cachedRead(answerClass, route.url, keyOf, route.config?.atVerifiedHeight === true)]
      route.onSend = [(request, reply, payload, done) => { done(null, this.#built(request, reply, payload)) }, ...[route.onSend ?? []].flat()]
      return
    }
    // Neither pinned nor cached: callbacks, no promise per request. A pure or local answer
    // reads no chain (/v1/status): no reader is made for it, request.chain stays unset.
    const cacheControl = answerClass === 'pure' ? IMMUTABLE_CACHE_CONTROL : LATEST_CACHE_CONTROL
    if (answerClass === 'uncached') route.preHandler = [this.#unpinned, ...[route.preHandler ?? []].flat()]
    route.onSend = [(request, reply, payload, done) => { done(null, this.#tags.tagged(request, reply, payload, cacheControl)) }, ...[route.onSend ?? []].flat()]
  }

  // request.chain carries the request's trace down to its chain exchanges (src/tracing/) and
  // its client down to the read queue (read-context.ts).
  readonly #unpinned = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    request.chain = this.#chain.unpinned(readContextOf(request))
    done()
  }

  // A callback preHandler: a read answered here (a hit, a 304) sends its answer and never calls
  // `done`, so the route's handler never runs (it would read the chain for an answer thrown
  // away, "Reply was already sent"). A hit at a fresh head is answered in this one call: no
  // promise, the key built once, the cache read once, no chain reader made. Only a read that
  // must wait (no fresh head, a minimum height, a miss) goes on asynchronously.
  #cachedRead (answerClass: 'latest' | 'fixed', route: string, keyOf: KeyOf, atVerifiedHeight: boolean) {
    const latest = answerClass === 'latest'
    return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
      if (!latest) {
        this.#pin.fixedHeaders(reply)
        return settle(this.#read(request, reply, { base: keyOf(request), route, latest }, undefined, () => this.#pin.fixed(request)), done)
      }
      this.#pin.latestHeaders(reply)
      const verified = atVerifiedHeight ? this.#pin.verifiedHeight(request) : undefined
      // A proven route read at the head (V not known yet, or below the client's minimum) is not
      // proven: kept apart, so that once V reaches its height the proven answer is built.
      const read: CachedRead = { base: atVerifiedHeight && verified === undefined ? `${keyOf(request)}${UNPROVEN_KEY}` : keyOf(request), route, latest }
      const height = verified ?? this.#pin.heightNow(request)
      if (height !== undefined) return settle(this.#read(request, reply, read, height, () => this.#pin.at(request, height)), done)
      settle(this.#pinnedRead(request, reply, read), done)
    }
  }

  // The height chosen by asking (no fresh head, a minimum height, no cache).
  async #pinnedRead (request: FastifyRequest, reply: FastifyReply, read: CachedRead): Promise<Outcome> {
    const reader = await this.#pin.latest(request)
    const height = reader.height
    if (height === undefined) {
      request.chain = reader
      return this.#unknownHeight(request, reply, read)
    }
    return this.#read(request, reply, read, height, () => reader)
  }

  /**
   * The read of `read`'s key at `height`: a 304 or a hit answered at once (ANSWERED), else the
   * request's reader (`reader`, made now) set for its handler, after the cache's other sources
   * (an answer being built, the pool's) when it is on.
   */
  #read (request: FastifyRequest, reply: FastifyReply, read: CachedRead, height: number | undefined, reader: () => ChainReader): Outcome | Promise<Outcome> {
    const key = keyAt(read.base, height)
    const cached = this.#cache?.get(key)
    // A cached answer holds its key's tag, made on this replica (answer-cache.ts): no digest per
    // hit. A miss is tagged once built (#built); its key is digested here only to compare.
    const etag = cached?.etag ?? (request.headers['if-none-match'] === undefined ? undefined : tagOf(key))
    if (etag !== undefined && holdsAnswer(request, etag)) {
      tagAnswer(reply, height, etag)
      this.#revalidated(reply, read.route).send()
      return ANSWERED
    }
    if (cached !== undefined) return this.#found(reply, read.route, height, 'hit', cached)
    request.chain = reader()
    if (this.#cache !== undefined) return this.#answer(this.#cache, reply, read, key, height)
    this.#reads.set(request, read)
    return BUILD
  }

  // Without the cache (one node), the height is known once the first read is answered; a
  // revalidation against the fresh head still costs the chain nothing.
  #unknownHeight (request: FastifyRequest, reply: FastifyReply, read: CachedRead): Outcome {
    const fresh = this.#chain.heads.freshHead()
    const etag = fresh === undefined ? undefined : tagOf(keyAt(read.base, fresh))
    if (etag !== undefined && holdsAnswer(request, etag)) {
      tagAnswer(reply, fresh, etag)
      this.#revalidated(reply, read.route).send()
      return ANSWERED
    }
    this.#reads.set(request, read)
    return BUILD
  }

  // The key is not in this replica's cache: an answer being built, the pool's, or this read's build.
  async #answer (cache: AnswerCache, reply: FastifyReply, read: CachedRead, key: string, height: number | undefined): Promise<Outcome> {
    const found = await cache.lookupMissed(key)
    // Sent as found, with its tag: its onSend has nothing to keep.
    if (found.result !== 'miss') return this.#found(reply, read.route, height, found.result, found.answer)
    this.#result(reply, read.route, 'miss')
    read.build = found.build
    this.#reads.set(reply.request, read)
    // The build ends at its handler's end (#built: Fastify runs onSend even for a client gone),
    // or sooner when the client leaves mid-build: the key's claim is let go at once, so the
    // pool's other replicas build it without waiting for an answer nobody is waiting for (the
    // answer, if it comes later, is still kept here). A client gone already, during the lookup,
    // leaves it to the handler's end: 'close' does not come twice.
    reply.raw.once('close', () => { found.build.finish(undefined) })
    return BUILD
  }

  #found (reply: FastifyReply, route: string, height: number | undefined, result: CacheResult, answer: CachedAnswer): Outcome {
    this.#result(reply, route, result)
    tagAnswer(reply, height, answer.etag)
    if (answer.verification !== undefined) reply.header(VERIFICATION_HEADER, answer.verification)
    reply.type(answer.contentType).send(answer.body)
    return ANSWERED
  }

  #built (request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
    const read = this.#reads.get(request)
    // Answered by its preHandler (a hit, a 304), or refused before it: tagged as any other GET 200.
    if (read === undefined) return this.#tags.tagged(request, reply, payload, LATEST_CACHE_CONTROL)
    const height = request.chain.height
    if (reply.statusCode !== 200) {
      read.build?.finish(undefined)
      return uncacheable(reply, height, payload)
    }
    // A latest-state answer read unpinned (no node told its height, issue 33): tagged by its
    // body and never cached, since a key without its height would stand for every later block.
    if (read.latest && height === undefined) return this.#tags.tagged(request, reply, payload, LATEST_CACHE_CONTROL)
    const key = keyAt(read.base, height)
    const etag = tagOf(key)
    tagAnswer(reply, height, etag)
    // A handler's answer, serialized by its route's schema: a string.
    const verification = reply.getHeader(VERIFICATION_HEADER) as string | undefined
    const answer: CachedAnswer = { body: Buffer.from(payload as string), contentType: String(reply.getHeader('content-type')), etag, verification }
    // Kept only by a build: a read without one had no cache, or no height to key it by.
    read.build?.finish(answer)
    // Built without knowing its height first (no cache, no fresh head): the tag is compared now.
    if (reply.getHeader(CACHE_HEADER) !== undefined || !holdsAnswer(request, etag)) return payload
    this.#revalidated(reply, read.route)
    return ''
  }

  #revalidated (reply: FastifyReply, route: string): FastifyReply {
    return this.#result(reply, route, 'revalidated').code(304)
  }

  #result (reply: FastifyReply, route: string, result: CacheResult): FastifyReply {
    this.#observer?.cacheResult(route, result)
    return reply.header(CACHE_HEADER, result)
  }
}

/** What a proven route's key gains when it is read at the head, unproven (never the key of its proven answer at that height). */
const UNPROVEN_KEY = ' unproven'

/** How a cacheable read's preHandler ended: answered (a hit, a 304), or on to its handler to build the answer. */
const ANSWERED = 'answered'
const BUILD = 'build'
type Outcome = typeof ANSWERED | typeof BUILD

/** Ends a preHandler by its outcome: `done` for a build (or an error), nothing once answered. */
function settle (outcome: Outcome | Promise<Outcome>, done: HookHandlerDoneFunction): void {
  if (outcome === BUILD) return done()
  if (outcome === ANSWERED) return
  outcome.then((ended) => { if (ended === BUILD) done() }, done)
}

/** An error: never cached, by us or by anyone downstream. */
function uncacheable (reply: FastifyReply, height: number | undefined, payload: unknown): unknown {
  if (height !== undefined) reply.header(BLOCK_HEIGHT_HEADER, String(height))
  reply.removeHeader('etag')
  reply.header('cache-control', 'no-store')
  return payload
}

/** The ETag a latest-state answer of `route` has at `height` (a long-poll's If-None-Match is compared with it). */
export function answerTag (request: FastifyRequest, route: string, height: number): string {
  const declared = Object.keys((request.routeOptions.schema?.querystring as { properties?: object } | undefined)?.properties ?? {})
  return tagOf(keyAt(answerKeyOf(route, paramSpellings(route), declared)(request), height))
}

export { matchesTag }
