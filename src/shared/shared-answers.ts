import type { CachedAnswer, PoolAnswers } from '../cache/answer-cache.js'
import { KEEPS_ALIVE, pause, REAL_CLOCK, type Clock } from '../clock.js'
import type { SharedStore } from './store.js'

// Answers shared across the pool (docs/shared-tier.md, "Answers"). An answer's key is its
// route, parameters and height (src/cache/http-cache.ts), and what a height answers never
// changes, so any replica may send the bytes another built, with the same ETag. A replica that
// misses looks here before it asks the chain; of the replicas that miss one key at once, the
// one that claims it builds and the others wait a bounded time for its answer, so the chain is
// asked once per key per block for the pool, not once per replica.

/** How a replica's miss went in the shared tier (edge_api_shared_answers_total). */
export type SharedLookup = 'hit' | 'waited' | 'claimed' | 'gave_up' | 'unavailable'
export const SHARED_LOOKUPS: readonly SharedLookup[] = ['hit', 'waited', 'claimed', 'gave_up', 'unavailable']

/** Keys' prefix; the version names the value's shape. One store serves one chain (docs/shared-tier.md). */
export const ANSWER_PREFIX = 'edge-api:1:answer:'
export const CLAIM_PREFIX = 'edge-api:1:building:'

/**
 * How long a shared answer is kept. A latest-state answer is asked for during its block (a
 * few seconds on gonka) and by clients a little behind; a fixed one for as long as anyone
 * asks, but each replica keeps its own in its answer cache. A bound, not forever: the store
 * must never fill with answers nobody will ask for again (eRPC's ttl 0, erpc#858).
 */
export const ANSWER_TTL_MS = 60_000
/** A claim outlives any build it stands for only if the build is quick; past it, another replica builds. */
export const CLAIM_TTL_MS = 2000
/** The longest a replica that did not claim a key waits for the answer of the one that did, then builds its own. */
export const WAIT_FOR_CLAIM_MS = 60
/** How often it looks for that answer while waiting. */
export const WAIT_POLL_MS = 4
/** Answers larger than this are not shared: a store read that size would cost more than the chain read it saves. */
export const MAX_SHARED_BYTES = 1024 * 1024

export interface SharedAnswersOptions {
  readonly store: SharedStore
  readonly onLookup?: (result: SharedLookup) => void
  /** @default WAIT_FOR_CLAIM_MS */
  readonly waitMs?: number
  /** What the wait for a claimed key's answer is timed on. @default REAL_CLOCK */
  readonly clock?: Clock
}

/** The pool's built answers: find() before a replica builds one, keep() once it has. */
export class SharedAnswers implements PoolAnswers {
  readonly #store: SharedStore
  readonly #onLookup: (result: SharedLookup) => void
  readonly #waitMs: number
  readonly #clock: Clock

  constructor (options: SharedAnswersOptions) {
    this.#store = options.store
    this.#onLookup = options.onLookup ?? (() => {})
    this.#waitMs = options.waitMs ?? WAIT_FOR_CLAIM_MS
    this.#clock = options.clock ?? REAL_CLOCK
  }

  /**
   * The answer at `key` if another replica built it, or is building it and finishes within
   * the wait; undefined: this replica builds it (it holds the claim, or the store did not say).
   */
  async find (key: string): Promise<CachedAnswer | undefined> {
    // One round trip: the look and the claim go out together (the client pipelines them).
    const [value, claimed] = await Promise.all([this.#store.get(ANSWER_PREFIX + key), this.#store.claim(CLAIM_PREFIX + key, CLAIM_TTL_MS)])
    const found = decode(value)
    if (found !== undefined) return this.#result('hit', found)
    if (claimed !== false) return this.#result(claimed === true ? 'claimed' : 'unavailable', undefined)
    const deadline = this.#clock.now() + this.#waitMs
    while (this.#clock.now() < deadline) {
      // A read is waiting on it: kept alive, as the read's own socket is.
      await pause(this.#clock, WAIT_POLL_MS, KEEPS_ALIVE)
      const answer = decode(await this.#store.get(ANSWER_PREFIX + key))
      if (answer !== undefined) return this.#result('waited', answer)
    }
    return this.#result('gave_up', undefined)
  }

  /** Shares an answer this replica built, in the background. */
  keep (key: string, answer: CachedAnswer): void {
    if (answer.body.length > MAX_SHARED_BYTES) return
    this.#store.set(ANSWER_PREFIX + key, encode(answer), ANSWER_TTL_MS)
  }

  /** The build this replica claimed will not be shared. TODO(shared helper): release the claim this replica owns; a no-op until then. */
  release (_key: string): void {}

  #result (result: SharedLookup, answer: CachedAnswer | undefined): CachedAnswer | undefined {
    this.#onLookup(result)
    return answer
  }
}

// An answer as one string: its content type and ETag on the first two lines, then the body
// (JSON or text, as the route serialized it).
function encode (answer: CachedAnswer): string {
  return `${answer.contentType}\n${answer.etag}\n${answer.body.toString('utf8')}`
}

function decode (value: string | undefined): CachedAnswer | undefined {
  if (value === undefined) return undefined
  const first = value.indexOf('\n')
  const second = value.indexOf('\n', first + 1)
  // Not of this shape (another program's key): a miss.
  if (first < 1 || second < 0) return undefined
  return { contentType: value.slice(0, first), etag: value.slice(first + 1, second), body: Buffer.from(value.slice(second + 1), 'utf8') }
}
