import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'

// The conditional request (RFC 9110 §13): an answer's ETag and the If-None-Match that turns a
// repeated read into a 304. A cached answer's tag is derived here from its key, on every
// replica alike, never taken from what the pool's store holds (src/cache/answer-cache.ts).

/** The response header naming the block height an answer was read at. */
export const BLOCK_HEIGHT_HEADER = 'x-block-height'

/**
 * The ETag of an answer's key: the same on every replica at the same height, and naming that
 * height (`"<height>-<digest>"`) when the key has one (answer-key.ts's keyAt), so a replica a
 * block behind the tag's can tell that its client holds a newer block than it has
 * (heldTagHeight: a long-poll by tag waits for one above it).
 */
export function tagOf (key: string): string {
  const height = /@(\d+)$/.exec(key)?.[1]
  return height === undefined ? `"${digest(key)}"` : `"${height}-${digest(key)}"`
}

/** The highest block height a tag of If-None-Match names (tagOf), if any names one. */
export function heldTagHeight (header: string | undefined): number | undefined {
  if (header === undefined) return undefined
  let highest: number | undefined
  for (const tag of header.split(',')) {
    const height = /^\s*(?:W\/)?"(\d{1,15})-[\w-]{16}"\s*$/.exec(tag)?.[1]
    if (height !== undefined) highest = Math.max(highest ?? 0, Number(height))
  }
  return highest
}

/** Sends the answer's height (when it has one) and its tag. */
export function tagAnswer (reply: FastifyReply, height: number | undefined, etag: string): void {
  if (height !== undefined) reply.header(BLOCK_HEIGHT_HEADER, String(height))
  reply.header('etag', etag)
}

/** If-None-Match's weak comparison (RFC 9110 §13.1.2): any listed tag, W/ or not, or "*". */
export function matchesTag (header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  return header.split(',').some((tag) => {
    const trimmed = tag.trim()
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag
  })
}

/** Whether the request already holds the answer tagged `etag`: a 304 instead of its bytes. */
export function holdsAnswer (request: FastifyRequest, etag: string): boolean {
  return matchesTag(request.headers['if-none-match'], etag)
}

/**
 * ETags of answers without a cache key (uncached, pure and unpinned routes): the tag of the
 * body. Most of these answers repeat (/v1/status, /v1/versions), and a SHA-1 per request was
 * ~4% of serving /v1/status (BENCHMARKS.md, hot path): the last body's tag is kept, one per app.
 */
export class BodyTags {
  #last: { body: string, etag: string } | undefined

  tagOf (body: string): string {
    if (body !== this.#last?.body) this.#last = { body, etag: `"${digest(body)}"` }
    return this.#last.etag
  }

  /**
   * A GET 200 without a tag gets its body's, and a 304 when the request holds it (bandwidth
   * saved; the answer was built all the same). Returns the payload to send.
   */
  tagged (request: FastifyRequest, reply: FastifyReply, payload: unknown, cacheControl: string): unknown {
    // A cache hit is already tagged with its key's tag.
    if (request.method !== 'GET' || reply.statusCode !== 200 || reply.hasHeader('etag')) return payload
    // Serialized JSON or text: a string.
    const etag = this.tagOf(payload as string)
    reply.header('etag', etag)
    reply.header('cache-control', cacheControl)
    if (!holdsAnswer(request, etag)) return payload
    reply.code(304)
    return ''
  }
}

/** A short, stable digest for tags: 96 bits of SHA-1, base64url. */
function digest (data: string): string {
  return createHash('sha1').update(data).digest('base64url').slice(0, 16)
}
