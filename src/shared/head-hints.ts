import { randomUUID } from 'node:crypto'
import { pause, REAL_CLOCK, type Clock } from '../clock.js'
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

/** The channel heads are published on; the version names the message's shape (`<height> <replica id>`). */
export const HEADS_CHANNEL = 'edge-api:1:heads'

/** Blocks beyond EDGE_API_MAX_NODE_LAG a hint may be ahead of this replica's best head and still be looked at. */
export const HINT_SLACK_BLOCKS = 3
/** The longest a latest-state read waits for the look a hint started: the look is one head poll (~1–3 ms on a near node). */
export const HINT_WAIT_MS = 50
/** After a look that did not confirm a hint, hints are ignored this long: a publisher nobody's nodes agree with costs one look a second. */
export const HINT_QUIET_MS = 1000

/** What the hints need of this replica's heads (ChainHeads). */
export interface HintedHeads {
  /** The highest height any of this replica's nodes has answered (0: none yet). */
  readonly best: number
  /** Polls the nodes now, after any poll in flight (which may have asked before the block existed); never rejects. */
  lookAgain (): Promise<void>
}

export interface HeadHintsOptions {
  readonly store: SharedStore
  /** EDGE_API_MAX_NODE_LAG: a hint further ahead than this plus HINT_SLACK_BLOCKS is implausible. */
  readonly maxLag: number
  readonly onHint?: (result: HintResult) => void
  readonly log: { warn (fields: object, message: string): void, info (fields: object, message: string): void }
  /** @default HINT_WAIT_MS */
  readonly waitMs?: number
  /** @default HINT_QUIET_MS */
  readonly quietMs?: number
  /** What the reads' wait and the quiet time are timed on. @default REAL_CLOCK */
  readonly clock?: Clock
}

/**
 * The pool's heads as hints to this replica: publishes the heads its nodes confirm
 * (confirmed()), looks at its own nodes when another replica's head is ahead, and tells
 * latest-state reads what to wait for (settled()).
 */
export class HeadHints {
  readonly #id = randomUUID()
  readonly #store: SharedStore
  readonly #maxAhead: number
  readonly #onHint: (result: HintResult) => void
  readonly #log: HeadHintsOptions['log']
  readonly #waitMs: number
  readonly #quietMs: number
  readonly #clock: Clock
  #heads: HintedHeads | undefined
  #look: Promise<void> | undefined
  #quietUntil = 0
  #rejecting = false

  constructor (options: HeadHintsOptions) {
    this.#store = options.store
    this.#maxAhead = options.maxLag + HINT_SLACK_BLOCKS
    this.#onHint = options.onHint ?? (() => {})
    this.#log = options.log
    this.#waitMs = options.waitMs ?? HINT_WAIT_MS
    this.#quietMs = options.quietMs ?? HINT_QUIET_MS
    this.#clock = options.clock ?? REAL_CLOCK
  }

  /** Starts listening to the pool's heads for `heads` (ChainHeads). */
  follow (heads: HintedHeads): void {
    this.#heads = heads
    this.#store.subscribe(HEADS_CHANNEL, (message) => { this.offer(message) })
  }

  /** One of this replica's nodes confirmed `height`, above the best head known before: the pool hears of it. */
  confirmed (height: number): void {
    this.#store.publish(HEADS_CHANNEL, `${height} ${this.#id}`)
    this.#onHint('published')
  }

  /**
   * A head published on the channel. Looked at only if it is another replica's, above this
   * replica's best head, and not implausibly far above it; never served as such.
   */
  offer (message: string): HintResult {
    const [text, from] = message.split(' ')
    const height = Number(text)
    const heads = this.#heads as HintedHeads
    const best = heads.best
    let result: HintResult
    if (from === this.#id) return 'published'
    if (!Number.isSafeInteger(height) || height < 1 || best === 0 || this.#clock.now() < this.#quietUntil) result = 'ignored'
    else if (height <= best) result = 'behind'
    else if (height - best > this.#maxAhead) result = 'implausible'
    else result = 'looked'
    this.#onHint(result)
    this.#logRejection(result, height, best)
    if (result === 'looked' && this.#look === undefined) this.#look = this.#lookFor(height, heads)
    return result
  }

  /** What a latest-state read waits for before it picks its height: the look a hint started, at most waitMs; undefined when none. */
  settled (): Promise<void> | undefined {
    const look = this.#look
    if (look === undefined) return undefined
    return Promise.race([look, pause(this.#clock, this.#waitMs)])
  }

  async #lookFor (height: number, heads: HintedHeads): Promise<void> {
    await heads.lookAgain()
    const confirmed = heads.best >= height
    this.#onHint(confirmed ? 'confirmed' : 'unconfirmed')
    // None of this replica's nodes has it (yet): serve from them as before, and give the
    // channel a rest so a publisher nobody agrees with cannot keep every read waiting.
    if (!confirmed) this.#quietUntil = this.#clock.now() + this.#quietMs
    this.#look = undefined
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
