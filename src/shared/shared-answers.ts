import { randomUUID } from 'node:crypto'
import type { CachedAnswer, PoolAnswers } from '../cache/answer-cache.js'
import { KEEPS_ALIVE, REAL_CLOCK, type Clock } from '../clock.js'
import { AnswerSeal, type SharedAnswer } from './answer-value.js'
import type { SharedStore } from './store.js'

// Answers shared across the pool (docs/shared-tier.md, "Answers"). An answer's key is its
// route, parameters and height (src/cache/http-cache.ts), and what a height answers never
// changes, so any replica may send the bytes another built. A replica that misses looks here
// before it asks the chain. Of the replicas that miss one key at once, the one that claims it
// builds; the others wait for a message on the pool's channel saying it was built (or will
// not be), so the chain is asked about once per key per block for the pool however long the
// build takes, and a key whose build is not shared (an error, an answer too large) costs the
// next miss no wait. Names carry the chain's network and this build's answer format: a
// replica of another chain or another build neither reads nor claims this one's answers.

/** How a replica's miss went in the shared tier (edge_api_shared_answers_total). */
export type SharedLookup = 'hit' | 'waited' | 'claimed' | 'released' | 'gave_up' | 'unavailable'
export const SHARED_LOOKUPS: readonly SharedLookup[] = ['hit', 'waited', 'claimed', 'released', 'gave_up', 'unavailable']

/** Names' prefix; the version names the shape of the names, values and messages. */
export const SHARED_PREFIX = 'edge-api:2:'
/** The channel a builder says on that its answer is there (`built <name>`) or will not be (`released <name>`). */
export const ANSWERS_CHANNEL = `${SHARED_PREFIX}answers`

/**
 * How long a shared answer is kept. A latest-state answer is asked for during its block (a
 * few seconds on gonka) and by clients a little behind; a fixed one for as long as anyone
 * asks, but each replica keeps its own in its answer cache. A bound, not forever: the store
 * must never fill with answers nobody will ask for again (eRPC's ttl 0, erpc#858).
 */
export const ANSWER_TTL_MS = 60_000
/** A claim's life: past it (its builder gone without a word), another replica may build the key. */
export const CLAIM_TTL_MS = 3000
/**
 * The longest a replica that did not claim a key waits for the claimer's word, then builds its
 * own: a build slower than this (a chain under load) is paid twice, not once per replica.
 */
export const WAIT_FOR_BUILD_MS = 1000
/** Answers larger than this are not shared: a store read that size would cost more than the chain read it saves. */
export const MAX_SHARED_BYTES = 1024 * 1024

export interface SharedAnswersOptions {
  readonly store: SharedStore
  /** The chain's network (node_info's), once this replica knows it; until then it shares nothing. */
  readonly network: () => string | undefined
  /** This build's answer format (its version): answers of another format are not this build's to serve. */
  readonly format: string
  /** EDGE_API_REDIS_SECRET: values are signed with it (src/shared/answer-value.ts). */
  readonly secret?: string
  readonly onLookup?: (result: SharedLookup) => void
  /** @default WAIT_FOR_BUILD_MS */
  readonly waitMs?: number
  /** What the wait for a claimed key's word is timed on. @default REAL_CLOCK */
  readonly clock?: Clock
}

/** A key's names in the store. */
interface Names { readonly answer: string, readonly claim: string }

/** What a waiter hears: the key built, released without an answer, or nothing within its wait. */
type News = 'built' | 'released' | 'timeout'

/** The pool's built answers: find() before a replica builds one, keep() once it has, release() when it will not. */
export class SharedAnswers implements PoolAnswers {
  /** This replica's claims are in its name: it never waits on its own. */
  readonly #owner = randomUUID()
  readonly #store: SharedStore
  readonly #network: () => string | undefined
  readonly #format: string
  readonly #seal: AnswerSeal
  readonly #onLookup: (result: SharedLookup) => void
  readonly #waitMs: number
  readonly #clock: Clock
  /** Waiters by answer name: one per find() waiting, each gone when its wait ends. */
  readonly #waiters = new Map<string, Set<(news: News) => void>>()

  constructor (options: SharedAnswersOptions) {
    this.#store = options.store
    this.#network = options.network
    this.#format = options.format
    this.#seal = new AnswerSeal(options.secret)
    this.#onLookup = options.onLookup ?? (() => {})
    this.#waitMs = options.waitMs ?? WAIT_FOR_BUILD_MS
    this.#clock = options.clock ?? REAL_CLOCK
    this.#store.subscribe(ANSWERS_CHANNEL, (message) => { this.#heard(message) })
  }

  /**
   * The answer at `key` if another replica built it, or is building it and says so within the
   * wait; undefined: this replica builds it (it holds the claim, or the store did not say).
   * The ETag is the caller's to set: it is not shared.
   */
  async find (key: string): Promise<CachedAnswer | undefined> {
    const names = this.#names(key)
    if (names === undefined) return this.#result('unavailable', undefined)
    // Listening before asking: a builder's word that comes before the claim's answer is not missed.
    const waiter = this.#listen(names.answer)
    try {
      // One round trip: the look and the claim go out together (the client pipelines them).
      const [value, claimed] = await Promise.all([this.#store.get(names.answer), this.#store.claim(names.claim, this.#owner, CLAIM_TTL_MS)])
      const found = this.#seal.decode(names.answer, value)
      if (found !== undefined) return this.#result('hit', found)
      if (claimed !== false) return this.#result(claimed === true ? 'claimed' : 'unavailable', undefined)
      // Nobody would wake it (the subscription is down), or the claim is this replica's own (a release the store missed).
      if (!this.#store.hearing) return this.#result('unavailable', undefined)
      if (await this.#store.get(names.claim) === this.#owner) return this.#result('claimed', undefined)
      return await this.#waitFor(names, waiter)
    } finally {
      waiter.stop()
    }
  }

  /** Shares an answer this replica built and wakes those waiting for it, in the background. */
  keep (key: string, answer: CachedAnswer): void {
    const names = this.#names(key)
    if (names === undefined) return
    if (answer.body.length > MAX_SHARED_BYTES) {
      this.release(key)
      return
    }
    this.#store.set(names.answer, this.#seal.encode(names.answer, answer), ANSWER_TTL_MS)
    this.#store.publish(ANSWERS_CHANNEL, `built ${names.answer}`)
  }

  /** Keys this replica's reads wait on another replica's word for: each gone when its last wait ends, so misses leave nothing behind. */
  get waiting (): number {
    return this.#waiters.size
  }

  /** This replica's build of `key` will not be shared (an error, a client gone): its claim is let go and its waiters woken. */
  release (key: string): void {
    const names = this.#names(key)
    if (names === undefined) return
    this.#store.release(names.claim, this.#owner)
    this.#store.publish(ANSWERS_CHANNEL, `released ${names.answer}`)
  }

  #names (key: string): Names | undefined {
    const network = this.#network()
    if (network === undefined) return undefined
    const scope = `${SHARED_PREFIX}${network}:${this.#format}:`
    return { answer: `${scope}answer:${key}`, claim: `${scope}building:${key}` }
  }

  async #waitFor (names: Names, waiter: { news: Promise<News> }): Promise<CachedAnswer | undefined> {
    const news = await waiter.news
    if (news === 'released') return this.#result('released', undefined)
    // Built, or no word in time (a message lost in a reconnection): one more look either way.
    const found = this.#seal.decode(names.answer, await this.#store.get(names.answer))
    return this.#result(found === undefined ? 'gave_up' : 'waited', found)
  }

  /** A waiter for `name`'s news, which hears 'timeout' after the wait; stop() once it is done with. */
  #listen (name: string): { news: Promise<News>, stop: () => void } {
    let tell!: (news: News) => void
    const news = new Promise<News>((resolve) => { tell = resolve })
    const waiters = this.#waiters.get(name) ?? new Set()
    waiters.add(tell)
    this.#waiters.set(name, waiters)
    // A read is waiting on it: kept alive, as the read's own socket is.
    const cancel = this.#clock.after(this.#waitMs, () => { tell('timeout') }, KEEPS_ALIVE)
    const stop = (): void => {
      cancel()
      waiters.delete(tell)
      if (waiters.size === 0) this.#waiters.delete(name)
    }
    return { news, stop }
  }

  #heard (message: string): void {
    const space = message.indexOf(' ')
    const news = message.slice(0, space)
    if (news !== 'built' && news !== 'released') return
    for (const tell of this.#waiters.get(message.slice(space + 1)) ?? []) tell(news)
  }

  #result (result: SharedLookup, answer: SharedAnswer | undefined): CachedAnswer | undefined {
    this.#onLookup(result)
    return answer === undefined ? undefined : { ...answer, etag: '' }
  }
}
