import type { ChainEvent, EventCursor } from '../chain/chain-events.js'
import type { Clock } from '../clock.js'
import { EventStream, REPLAY_WINDOW, RETRY_MS, type EventSource } from './event-stream.js'
import type { HeadFollower } from './head-follower.js'
import type { QuotaRefusal, WaitQuota } from './wait-quota.js'

// Every open GET /v1/events stream of a replica (docs/waiting.md): capped per client and per
// replica with the held long-polls, told of each new head (a stream then catches up to it), kept alive by a heartbeat,
// ended at its maximum age, and, when the app closes (the drain's listener close), each ended
// at a random moment within DRAIN_SPREAD_MS with a random retry:, so its clients do not all
// reconnect at once. One timer ticks for all of them while any is open. A stream opened before
// any head is known waits for one (at most FIRST_HEAD_WAIT_MS), then starts at it.

/** A heartbeat comment after this long without a write. */
export const HEARTBEAT_MS = 15_000
/** How often the streams are looked at for a heartbeat or their age. */
export const TICK_MS = 1000
/** A stream's age at which it ends (and its client reconnects, to any replica): 10 min ± 10%. */
export const MAX_AGE_MS = 600_000
export { REPLAY_WINDOW }
/** A stream opened before the replica knows any head waits this long for one, then ends with its retry:. */
export const FIRST_HEAD_WAIT_MS = 20_000
/**
 * A stream ended (its age, the drain) whose last bytes its client has not taken this long
 * after is destroyed: a client that stops reading never holds the drain past the stream's end.
 */
export const END_FLUSH_MS = 1000
/** The drain ends the streams over this long, each asking for a retry in 1–5 s. */
export const DRAIN_SPREAD_MS = 5000
export const DRAIN_RETRY_MS = { least: 1000, spread: 4000 }

export interface StreamHeads {
  onHead (listener: (height: number) => void): () => void
}

/** What the streams report (the metrics). */
export interface StreamObserver {
  opened (open: number): void
  /** A stream closed, `seconds` after it opened; `open` are left. */
  closed (open: number, seconds: number): void
  sent (event: ChainEvent): void
  replayed (): void
  reset (): void
}

export interface EventStreamsOptions {
  readonly heads: StreamHeads
  readonly follower: HeadFollower
  readonly clock: Clock
  readonly source: EventSource
  /** The caps of open streams, shared with the held long-polls (app.ts). */
  readonly quota: WaitQuota
  readonly observer?: StreamObserver | undefined
  /** Draws for the age, the drain's moment and retry, 0–1. @default Math.random */
  readonly random?: () => number
}

interface Open {
  readonly client: string
  readonly unfollow: () => void
}

export class EventStreams {
  readonly #options: EventStreamsOptions
  readonly #quota: WaitQuota
  readonly #random: () => number
  readonly #open = new Map<EventStream, Open>()
  readonly #unsubscribe: () => void
  #head = 0
  #closing = false
  #cancelTick: (() => void) | undefined

  constructor (options: EventStreamsOptions) {
    this.#options = options
    this.#quota = options.quota
    this.#random = options.random ?? Math.random
    this.#unsubscribe = options.heads.onHead((head) => this.rise(head))
  }

  /**
   * Opens a stream for `client` from `cursor` (none: from the head's events), the head being
   * `head` (0: none known yet); the cap that refused it otherwise. close() it however it ends.
   */
  open (client: string, cursor: EventCursor | undefined, head: number): EventStream | QuotaRefusal {
    const refused = this.#quota.take(client)
    if (refused !== undefined) return refused
    this.rise(head)
    const { clock, observer } = this.#options
    const now = clock.now()
    const stream = new EventStream({
      source: this.#options.source,
      from: cursor,
      now,
      endsAt: now + MAX_AGE_MS * (0.9 + 0.2 * this.#random()),
      onEvent: (event) => observer?.sent(event),
      onResume: (result) => { if (result === 'reset') observer?.reset(); else observer?.replayed() }
    })
    this.#open.set(stream, { client, unfollow: this.#options.follower.follow() })
    observer?.opened(this.#open.size)
    // The app is closing: ended at once with its retry:, never a 503 (EventSource would stop for good).
    if (this.#closing) this.#endSpread(stream, 0)
    else this.#catchUp(stream)
    if (this.#cancelTick === undefined) this.#tick()
    return stream
  }

  /** The stream ended (however: its client gone, its age, the drain): its place is given back. */
  close (stream: EventStream): void {
    const open = this.#open.get(stream)
    if (open === undefined) return
    this.#open.delete(stream)
    stream.end(0, this.#options.clock.now())
    open.unfollow()
    this.#quota.give(open.client)
    this.#options.observer?.closed(this.#open.size, (this.#options.clock.now() - stream.openedAt) / 1000)
    if (this.#open.size === 0) {
      this.#cancelTick?.()
      this.#cancelTick = undefined
    }
  }

  /** The app closes: every stream ends within DRAIN_SPREAD_MS, each at its own moment. */
  drain (): void {
    this.#closing = true
    for (const stream of this.#open.keys()) this.#endSpread(stream, DRAIN_SPREAD_MS)
  }

  /** Stops following the heads (the app is closed). */
  stop (): void {
    this.#unsubscribe()
  }

  #endSpread (stream: EventStream, spreadMs: number): void {
    const retryMs = Math.round(DRAIN_RETRY_MS.least + DRAIN_RETRY_MS.spread * this.#random())
    this.#options.clock.after(spreadMs * this.#random(), () => { this.#end(stream, retryMs) })
  }

  /** Ends `stream` with `retryMs`; destroyed END_FLUSH_MS later if its client has not taken its end by then. */
  #end (stream: EventStream, retryMs: number): void {
    const { clock } = this.#options
    stream.end(retryMs, clock.now())
    clock.after(END_FLUSH_MS, () => { if (this.#open.has(stream)) stream.destroy() })
  }

  /** A head is known: every stream catches up to it (a stream opened before any head starts at it). */
  rise (head: number): void {
    if (head <= this.#head) return
    this.#head = head
    for (const stream of this.#open.keys()) this.#catchUp(stream)
  }

  #catchUp (stream: EventStream): void {
    const { clock } = this.#options
    stream.catchUp(() => this.#head, () => clock.now()).catch(() => { this.close(stream) })
  }

  /** Heartbeats and ages, once a TICK_MS while any stream is open. */
  #tick (): void {
    const { clock } = this.#options
    this.#cancelTick = clock.after(TICK_MS, () => {
      const now = clock.now()
      for (const stream of this.#open.keys()) {
        if (stream.ended) continue
        if (now >= stream.endsAt) this.#end(stream, RETRY_FOR_AGE_MS)
        else if (!stream.placed && now - stream.openedAt >= FIRST_HEAD_WAIT_MS) this.#end(stream, RETRY_MS)
        else if (now - stream.lastWriteAt >= HEARTBEAT_MS) stream.heartbeat(now)
      }
      this.#tick()
    })
  }
}

/** A stream ended by its age asks to come back at once (a retry of its normal length would be a gap in its events). */
const RETRY_FOR_AGE_MS = 1000
