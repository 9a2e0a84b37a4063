import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { ChainClient } from '../chain/client.js'
import type { ChainReader } from '../chain/types.js'
import type { AnswerCache, CachedAnswer, CacheResult } from './answer-cache.js'
import { withFixedReads } from './fixed-reads.js'
import { MIN_HEIGHT_HEADER, MinHeights, minimumHeight } from './min-height.js'
import { routeClass, type RouteClass } from './route-classes.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** What the handler reads the chain with: pinned to the answer's height for latest-state routes. */
    chain: ChainReader
  }
}

/** The response header naming the block height an answer was read at. */
export const BLOCK_HEIGHT_HEADER = 'x-block-height'
/** The response header saying how a cacheable answer was served (CacheResult). */
export const CACHE_HEADER = 'x-cache'

const LATEST_CACHE_CONTROL = 'no-cache'
const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable'

export interface AnswerCachingOptions {
  readonly chain: ChainClient
  /** Built answers; undefined when EDGE_API_CACHE_SIZE is 0 (pinning and ETags still apply). */
  readonly cache: AnswerCache | undefined
}

/** What a cacheable read carries from preHandler to onSend. */
interface Pending {
  /** The answer's key without its height (the route with its parameters). */
  readonly base: string
  readonly route: string
  /** A latest-state answer: without a height it is neither cached nor tagged by its key. */
  readonly latest: boolean
  /** Set when this read builds the answer others wait for. */
  readonly done?: (answer: CachedAnswer | undefined) => void
}

const pending = new WeakMap<FastifyRequest, Pending>()

/**
 * Pins, caches and tags /v1 answers by their route's class (src/cache/route-classes.ts).
 * Every chain read of a latest-state answer is pinned to one height: with the cache, the
 * replica's head (ChainHeads.latest); without it, the fresh head if known, else the height
 * its first read was answered at. The ETag and the cache key are (route, parameters,
 * height), so an If-None-Match with the current tag is a 304 and a repeated read within the
 * block a hit, both without a chain request. Concurrent misses of one key share the answer
 * the first one builds. Only 200s are cached or tagged.
 */
export async function answerCaching (app: FastifyInstance, { chain, cache }: AnswerCachingOptions): Promise<void> {
  const building = new Map<string, Promise<CachedAnswer | undefined>>()
  const observer = cache?.observer
  const minHeights = new MinHeights(chain)

  app.decorateRequest('chain', null as unknown as ChainReader)
  // Each route gets the hooks of its class, bound to it when it is added: a request pays only
  // for what its route needs, and no hook asks Fastify for the route's options (a getter that
  // builds an object on each read). Ahead of the route's own onSend and onResponse hooks, as
  // the scope's hooks were: Fastify's HEAD route ends its onSend with the body dropped. After
  // the route's own preHandlers: they check the input the schema cannot (a range, an epoch 0),
  // so a bad input is answered before the pin asks the chain anything (issue 33).
  app.addHook('onRoute', (route) => {
    let answerClass: RouteClass | undefined
    for (const method of [route.method].flat()) {
      answerClass = routeClass(method === 'HEAD' ? 'GET' : method, route.url)
      if (answerClass === undefined) throw new Error(`${method} ${route.url} has no class in ROUTE_CLASSES (src/cache/route-classes.ts)`)
    }
    if (answerClass === 'latest' || answerClass === 'fixed') {
      route.preHandler = [...[route.preHandler ?? []].flat(), cachedRead(answerClass, route.url)]
      route.onSend = [builtAnswer, ...[route.onSend ?? []].flat()]
      route.onResponse = [released, ...[route.onResponse ?? []].flat()]
      return
    }
    // Neither pinned nor cached: callbacks, no promise per request.
    const cacheControl = answerClass === 'pure' ? IMMUTABLE_CACHE_CONTROL : LATEST_CACHE_CONTROL
    route.preHandler = [unpinned, ...[route.preHandler ?? []].flat()]
    route.onSend = [function tagged (request, reply, payload, done) {
      done(null, untagged(request, reply, payload, cacheControl))
    }, ...[route.onSend ?? []].flat()]
  })

  // request.chain carries the request's trace down to its chain exchanges (src/tracing/):
  // otelTrace is absent with tracing off (chain.traced(undefined) is the client itself), null
  // on an untraced route.
  function unpinned (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    request.chain = chain.traced(request.otelTrace ?? undefined)
    done()
  }

  function cachedRead (answerClass: 'latest' | 'fixed', route: string) {
    return async function preHandler (request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const base = answerKey(request, route)
      const trace = request.otelTrace ?? undefined
      if (answerClass === 'latest') {
        // The answer chosen depends on the header, its errors too: an HTTP cache keys them by it (RFC 9110 §12.5.5).
        reply.header('vary', MIN_HEIGHT_HEADER)
        // The client's minimum height (src/cache/min-height.ts): a malformed one is a 400 before
        // any chain request. With one, the height is known before the first read even with one
        // node and no cache, so a hit, a 304 and a built answer are all at it or later.
        const minimum = minimumHeight(request.headers)
        const reader = minimum !== undefined ? await minHeights.reader(minimum, trace) : cache === undefined ? await chain.reader(trace) : await chain.latest(trace)
        request.chain = cache === undefined ? reader : withFixedReads(reader, cache)
        reply.header('cache-control', LATEST_CACHE_CONTROL)
      } else {
        const reader = chain.traced(trace)
        request.chain = cache === undefined ? reader : withFixedReads(reader, cache)
        reply.header('cache-control', IMMUTABLE_CACHE_CONTROL)
      }
      const key = keyAt(base, request.chain.height)
      // Without the cache (one node), the height is known once the first read is answered; a
      // revalidation against the fresh head still costs the chain nothing.
      if (answerClass === 'latest' && request.chain.height === undefined) {
        const fresh = chain.heads.fresh()
        if (fresh !== undefined && matchesTag(request.headers['if-none-match'], tagOf(keyAt(base, fresh)))) {
          tag(reply, fresh, tagOf(keyAt(base, fresh)))
          return sendResult(reply, route, 'revalidated').code(304).send()
        }
        pending.set(request, { base, route, latest: answerClass === 'latest' })
        return
      }
      // A hit has its tag stored with it: no digest per hit.
      const cached = cache?.get(key)
      const etag = cached?.etag ?? tagOf(key)
      tag(reply, request.chain.height, etag)
      if (matchesTag(request.headers['if-none-match'], etag)) return sendResult(reply, route, 'revalidated').code(304).send()
      if (cached !== undefined) return sendAnswer(sendResult(reply, route, 'hit'), cached)
      if (cache === undefined) {
        pending.set(request, { base, route, latest: answerClass === 'latest' })
        return
      }
      const shared = building.get(key)
      const answer = shared === undefined ? undefined : await shared
      if (answer !== undefined) return sendAnswer(sendResult(reply, route, 'coalesced'), answer)
      if (shared !== undefined) {
        // The answer it waited for failed: build its own (its chain reads still coalesce).
        sendResult(reply, route, 'miss')
        pending.set(request, { base, route, latest: answerClass === 'latest' })
        return
      }
      let done!: (answer: CachedAnswer | undefined) => void
      building.set(key, new Promise((resolve) => { done = resolve }))
      // Another replica may have built it, or be building it: the shared tier is asked
      // (a bounded wait) before the chain. Those waiting here wait for its answer too.
      const pooled = cache.shared === undefined ? undefined : await cache.shared.find(key)
      if (pooled !== undefined) {
        cache.set(key, pooled)
        done(pooled)
        building.delete(key)
        return sendAnswer(sendResult(reply, route, 'shared'), pooled)
      }
      sendResult(reply, route, 'miss')
      pending.set(request, { base, route, latest: answerClass === 'latest', done })
    }
  }

  async function builtAnswer (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const read = pending.get(request)
    // Answered by its preHandler (a hit, a 304), or refused before it: tagged as any other GET 200.
    if (read === undefined) return untagged(request, reply, payload, LATEST_CACHE_CONTROL)
    const height = request.chain.height
    if (reply.statusCode !== 200) {
      // Errors are never cached, by us or by anyone downstream.
      if (height !== undefined) reply.header(BLOCK_HEIGHT_HEADER, String(height))
      reply.removeHeader('etag')
      reply.header('cache-control', 'no-store')
      return payload
    }
    // A latest-state answer read unpinned (no node told its height, issue 33): tagged by its
    // body and never cached, since a key without its height would stand for every later block.
    if (read.latest && height === undefined) return untagged(request, reply, payload, LATEST_CACHE_CONTROL)
    const key = keyAt(read.base, height)
    const etag = tagOf(key)
    tag(reply, height, etag)
    // A handler's answer, serialized by its route's schema: a string.
    const answer = { body: Buffer.from(payload as string), contentType: String(reply.getHeader('content-type')), etag }
    cache?.set(key, answer)
    cache?.shared?.keep(key, answer)
    read.done?.(answer)
    // Built without knowing its height first (no cache, no fresh head): the tag is compared now.
    if (reply.getHeader(CACHE_HEADER) !== undefined || !matchesTag(request.headers['if-none-match'], etag)) return payload
    sendResult(reply, read.route, 'revalidated').code(304)
    return ''
  }

  // However the read ended (error, client gone), those waiting on it are released.
  async function released (request: FastifyRequest): Promise<void> {
    const read = pending.get(request)
    if (read?.done === undefined) return
    read.done(undefined)
    building.delete(keyAt(read.base, request.chain.height))
  }

  function sendResult (reply: FastifyReply, route: string, result: CacheResult): FastifyReply {
    observer?.cacheResult(route, result)
    return reply.header(CACHE_HEADER, result)
  }
}

/** The ETag a latest-state answer of `route` would have at `height` (a long-poll's If-None-Match is compared with it). */
export function answerTag (request: FastifyRequest, route: string, height: number): string {
  return tagOf(keyAt(answerKey(request, route), height))
}

function keyAt (base: string, height: number | undefined): string {
  return height === undefined ? base : `${base}@${height}`
}

/** The ETag of an answer's key: the same on every replica at the same height. */
function tagOf (key: string): string {
  return `"${digest(key)}"`
}

function tag (reply: FastifyReply, height: number | undefined, etag: string): void {
  if (height !== undefined) reply.header(BLOCK_HEIGHT_HEADER, String(height))
  reply.header('etag', etag)
}

function sendAnswer (reply: FastifyReply, answer: CachedAnswer): FastifyReply {
  return reply.type(answer.contentType).send(answer.body)
}

/**
 * Routes without an answer cache: a GET 200 gets the ETag of its body, and an If-None-Match
 * with it a 304 (bandwidth saved; the answer was built all the same).
 */
function untagged (request: FastifyRequest, reply: FastifyReply, payload: unknown, cacheControl: string): unknown {
  // A cache hit is already tagged with its key's tag.
  if (request.method !== 'GET' || reply.statusCode !== 200 || reply.hasHeader('etag')) return payload
  // Serialized JSON or text: a string.
  const etag = bodyTag(payload as string)
  reply.header('etag', etag)
  reply.header('cache-control', cacheControl)
  if (!matchesTag(request.headers['if-none-match'], etag)) return payload
  reply.code(304)
  return ''
}

// The last body tagged, and its tag: most of these answers repeat (/v1/status, /v1/versions),
// and a SHA-1 per request was ~4% of serving /v1/status (BENCHMARKS.md, hot path).
let lastTagged = { body: '', etag: '' }

function bodyTag (body: string): string {
  if (body !== lastTagged.body) lastTagged = { body, etag: `"${digest(body)}"` }
  return lastTagged.etag
}

/** The route with its parameters and the query parameters its schema declares (others cannot change the answer). */
function answerKey (request: FastifyRequest, route: string): string {
  const declared = (request.routeOptions.schema?.querystring as { properties?: object } | undefined)?.properties
  const query = request.query as Record<string, unknown>
  const queryPart = declared === undefined ? '' : Object.keys(declared).sort().map((name) => `${name}=${String(query[name])}`).join('&')
  return `${route} ${JSON.stringify(request.params)} ${queryPart}`
}

/** A short, stable digest for tags: 96 bits of SHA-1, base64url. */
function digest (data: string | Buffer): string {
  return createHash('sha1').update(data).digest('base64url').slice(0, 16)
}

/** If-None-Match's weak comparison (RFC 9110 §13.1.2): any listed tag, W/ or not, or "*". */
export function matchesTag (header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  return header.split(',').some((tag) => {
    const trimmed = tag.trim()
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag
  })
}
