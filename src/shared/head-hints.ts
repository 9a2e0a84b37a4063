import { randomUUID } from 'node:crypto'
import { REAL_CLOCK, type Clock } from '../clock.js'
import type { SharedStore } from './store.js'

// Heads shared across the pool (docs/shared-tier.md, "Heads"). A replica whose node confirms
// a new head publishes it; the others take it as a hint to look at their own nodes now, and
// make latest-state reads wait (briefly) for that look, so that a client whose next read
// lands on another replica does not see an older block. A hint is never a height served nor
// a floor: only an answer of this replica's own nodes moves what it serves. Nothing is
// stored: a store restarted empty, or holding anything at all, cannot hold a replica back
// (eRPC's frozen shared floor, erpc#924) nor ahead (Lava's inflated seen block, lava#2323).

/** What became of a head another replica published (edge_api_shared_heads_total). */
export type HintResult = 'published' | 'looked' | 'confirmed' | 'unconfirmed' | 'behind' | 'implausible' | 'ignored'
export const HINT_RESULTS: readonly HintResult[] = ['published', 'looked', 'confirmed', 'unconfirmed', 'behind', 'implausible', 'ignored']

/**
 * The channel heads of `network`'s chain are published on (`<height> <replica id>`): a store
 * shared by pools of two chains (mainnet, a testnet) never hands one the other's heads. Version
 * 2: version 1 was one channel for every chain (replicas of both versions, as in a rollout, do
 * not hear each other's heads; each still follows its own nodes).
 */
export function headsChannel (network: string): string {
  return `edge-api:2:heads:${network}`
}

/** Blocks beyond EDGE_API_MAX_NODE_LAG a hint may be ahead of this replica's best head and still be looked at. */
export const HINT_SLACK_BLOCKS = 3
/** After a look that did not confirm a hint, hints are ignored this long: a publisher nobody's nodes agree with costs one look a second. */
export const HINT_QUIET_MS = 1000

/** What the hints need of this replica's heads (ChainHeads). */
export interface HintedHeads {
  /** The highest height any of this replica's nodes has told (0: none yet). */
  readonly best: number
  /** Calls `listener` each time the best head rises; returns the unsubscribe. */
  onHead (listener: (height: number) => void): () => void
  /** Looks at this replica's nodes for a head another replica's told; resolves to whether they have it. */
  lookFor (height: number): Promise<boolean>
}

export interface HeadHintsOptions {
  readonly store: SharedStore
  /** The chain's network (node_info's), which names the channel (headsChannel). */
  readonly network: string
  readonly heads: HintedHeads
  /** EDGE_API_MAX_NODE_LAG: a hint further ahead than this plus HINT_SLACK_BLOCKS is implausible. */
  readonly maxLag: number
  readonly onHint?: (result: HintResult) => void
  readonly log: { warn (fields: object, message: string): void, info (fields: object, message: string): void }
  /** @default HINT_QUIET_MS */
  readonly quietMs?: number
  /** What the quiet time is timed on. @default REAL_CLOCK */
  readonly clock?: Clock
}

/**
 * The pool's heads as hints to this replica: publishes each new best head of its nodes
 * (deferred out of the chain exchange that told it), and has its own nodes looked at
 * (ChainHeads.lookFor) when another replica's head is ahead.
 */
export class HeadHints {
  readonly #id = randomUUID()
  readonly #store: SharedStore
  readonly #heads: HintedHeads
  readonly #maxAhead: number
  readonly #onHint: (result: HintResult) => void
  readonly #log: HeadHintsOptions['log']
  readonly #quietMs: number
  readonly #clock: Clock
  readonly #unsubscribe: () => void
  readonly #channel: string
  /** The highest height a look is under way for (0: none). */
  #lookingFor = 0
  #quietUntil = 0
  #rejecting = false

  /** Starts publishing this replica's heads and listening to the pool's. */
  constructor (options: HeadHintsOptions) {
    this.#store = options.store
    this.#heads = options.heads
    this.#maxAhead = options.maxLag + HINT_SLACK_BLOCKS
    this.#onHint = options.onHint ?? (() => {})
    this.#log = options.log
    this.#quietMs = options.quietMs ?? HINT_QUIET_MS
    this.#clock = options.clock ?? REAL_CLOCK
    this.#channel = headsChannel(options.network)
    // The head rose inside a chain exchange: the store hears of it after that exchange's turn.
    this.#unsubscribe = this.#heads.onHead((height) => { setImmediate(() => { this.#publish(height) }) })
    // Made once the network is known (shared-tier.ts): the head its nodes told before is told now.
    const best = this.#heads.best
    if (best > 0) setImmediate(() => { this.#publish(best) })
    this.#store.subscribe(this.#channel, (message) => { this.take(message) })
  }

  /** Stops publishing this replica's heads. */
  close (): void {
    this.#unsubscribe()
  }

  /**
   * Takes a head published on the channel: looked at only if it is another replica's, above
   * this replica's best head, not implausibly far above it, and above any head a look is
   * under way for (one for a lower head may have asked before this one existed: a look for
   * this one follows it). Never served as such. Returns what became of it.
   */
  take (message: string): HintResult {
    const [text, from] = message.split(' ')
    const height = Number(text)
    const best = this.#heads.best
    let result: HintResult
    if (from === this.#id) return 'published'
    if (!Number.isSafeInteger(height) || height < 1 || best === 0 || this.#clock.now() < this.#quietUntil || height <= this.#lookingFor) result = 'ignored'
    else if (height <= best) result = 'behind'
    else if (height - best > this.#maxAhead) result = 'implausible'
    else result = 'looked'
    this.#onHint(result)
    this.#logRejection(result, height, best)
    if (result === 'looked') this.#lookFor(height)
    return result
  }

  #publish (height: number): void {
    this.#store.publish(this.#channel, `${height} ${this.#id}`)
    this.#onHint('published')
  }

  #lookFor (height: number): void {
    this.#lookingFor = height
    this.#heads.lookFor(height).then((confirmed) => {
      this.#onHint(confirmed ? 'confirmed' : 'unconfirmed')
      // None of this replica's nodes has it (yet): serve from them as before, and give the
      // channel a rest so a publisher nobody agrees with cannot keep every read waiting.
      if (!confirmed) this.#quietUntil = this.#clock.now() + this.#quietMs
      if (this.#lookingFor === height) this.#lookingFor = 0
    })
  }

  /** One warn line when hints start being rejected as implausible, one info line when they are taken again. */
  #logRejection (result: HintResult, height: number, best: number): void {
    if (result === 'implausible' && !this.#rejecting) {
      this.#rejecting = true
      this.#log.warn({ hint: height, best, maxAhead: this.#maxAhead }, 'shared head ignored: far ahead of every node of this replica')
    } else if (result === 'looked' && this.#rejecting) {
      this.#rejecting = false
      this.#log.info({ hint: height, best }, 'shared heads plausible again')
    }
  }
}
