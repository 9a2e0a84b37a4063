import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import type { CachedAnswer } from '../cache/answer-cache.js'

// A shared answer as the store holds it, and the checks it passes before a replica serves it
// (docs/shared-tier.md, "What a replica trusts"). Anything that can write to the store could
// otherwise choose the bytes and the headers every replica serves, on an API that sells
// verification. So the value carries only the content type (with the answer's X-Verification,
// src/proven/, when it has one) and the body, with a digest its builder made over the key,
// that line and the body: a SHA-256, or, with
// EDGE_API_REDIS_SECRET, an HMAC-SHA256 a writer without the secret cannot make. The ETag is
// not stored: the answer cache computes it from the key, as for its own answers.

/** The content types a route of /v1 answers with: anything else in the store is not ours. */
export const SHARED_CONTENT_TYPES: ReadonlySet<string> = new Set(['application/json; charset=utf-8', 'text/plain; charset=utf-8'])

/** What a shared answer is: its bytes and their content type (the ETag is the cache's, from the key). */
export type SharedAnswer = Omit<CachedAnswer, 'etag'>

/** Signs and checks values; `secret` undefined: a plain digest (catches a foreign or damaged value, not a forger). */
export class AnswerSeal {
  readonly #secret: string | undefined

  constructor (secret: string | undefined) {
    this.#secret = secret
  }

  /** The value stored at `key`: `<content type>[\t<X-Verification>]\n<digest>\n<body>`. */
  encode (key: string, answer: SharedAnswer): string {
    const head = answer.verification === undefined ? answer.contentType : `${answer.contentType}\t${answer.verification}`
    return `${head}\n${this.#digest(key, head, answer.body)}\n${answer.body.toString('utf8')}`
  }

  /** The answer in `value` if it passes every check for `key`; undefined otherwise (then it is a miss). */
  decode (key: string, value: string | undefined): SharedAnswer | undefined {
    if (value === undefined) return undefined
    const first = value.indexOf('\n')
    const second = value.indexOf('\n', first + 1)
    if (first < 0 || second < 0) return undefined
    const head = value.slice(0, first)
    const tab = head.indexOf('\t')
    const contentType = tab < 0 ? head : head.slice(0, tab)
    if (!SHARED_CONTENT_TYPES.has(contentType)) return undefined
    const body = Buffer.from(value.slice(second + 1), 'utf8')
    const claimed = Buffer.from(value.slice(first + 1, second))
    const made = Buffer.from(this.#digest(key, head, body))
    if (claimed.length !== made.length || !timingSafeEqual(claimed, made)) return undefined
    if (contentType.startsWith('application/json') && !parses(body)) return undefined
    return tab < 0 ? { contentType, body } : { contentType, body, verification: head.slice(tab + 1) }
  }

  #digest (key: string, head: string, body: Buffer): string {
    const hash = this.#secret === undefined ? createHash('sha256') : createHmac('sha256', this.#secret)
    return hash.update(key).update('\n').update(head).update('\n').update(body).digest('base64url')
  }
}

/** Parsed once per key per replica: a digest proves who wrote the bytes, not that they are JSON. */
function parses (body: Buffer): boolean {
  try {
    JSON.parse(body.toString('utf8'))
    return true
  } catch {
    return false
  }
}
