import { PassThrough } from 'node:stream'
import { setImmediate as turn } from 'node:timers/promises'
import { eventId, isAfter, type ChainEvent, type EventCursor } from '../chain/chain-events.js'

// One GET /v1/events stream (docs/waiting.md): Server-Sent Events written to a PassThrough the
// reply sends, each event at most once and never one below one already sent; it catches up
// from its cursor to the replica's head one height at a time, the same way whether it is
// replaying after a reconnect or following live. It never starts below what it can serve: a
// stream opened before any head is known waits for one, and a cursor beyond the replay window
// (or far above the head) is reset to the head, so a catch-up is at most a window long.

/** The reconnect delay a stream asks of its client in normal operation, ms. */
export const RETRY_MS = 3000
/** A cursor further than this many blocks behind the head is answered event: reset. */
export const REPLAY_WINDOW = 1000
/**
 * A cursor further than this many blocks above the head is answered event: reset: a replica a
 * few blocks behind the one the client left waits for it (nothing is sent twice), but a
 * cursor no replica of this chain is near (another network's, a made-up one) is not answered
 * with silence for the stream's whole age.
 */
export const AHEAD_WINDOW = 20
/** A catch-up lets the event loop turn after this many heights: a replay never holds it for long. */
export const HEIGHTS_PER_TURN = 50
/**
 * Bytes written and not yet taken by the client past which the stream is given up (destroyed):
 * a client that stops reading costs the replica at most this (plus the socket's own buffers),
 * and its client reconnects from its cursor when it reads again.
 */
export const MAX_BUFFERED_BYTES = 256 * 1024

/** Where the stream takes each height's events from (src/chain/event-log.ts). */
export interface EventSource {
  at (height: number): Promise<ChainEvent[]>
}

export interface EventStreamOptions {
  readonly source: EventSource
  /** Where the client resumes from; undefined: from the head's events, once a head is known. */
  readonly from: EventCursor | undefined
  readonly now: number
  readonly endsAt: number
  readonly onEvent: (event: ChainEvent) => void
  /** A stream opened from a cursor was placed by its first head: replayed from it, or reset (beyond the replay window, or far above the head). */
  readonly onResume?: (result: 'replayed' | 'reset') => void
}

export class EventStream {
  readonly body = new PassThrough()
  readonly #source: EventSource
  readonly #onEvent: (event: ChainEvent) => void
  readonly #onResume: (result: 'replayed' | 'reset') => void
  /** Opened from a cursor and not yet placed by a head. */
  #resuming: boolean
  /** The last event sent (or the cursor the client resumed from); undefined until a head places it. */
  #sent: EventCursor | undefined
  #catchingUp = false
  #ended = false
  /** When something was last written (a heartbeat is due HEARTBEAT_MS after). */
  lastWriteAt: number
  /** When it was opened (a stream still without a head is ended after a while). */
  readonly openedAt: number
  /** When it ends by its maximum age. */
  readonly endsAt: number

  constructor (options: EventStreamOptions) {
    this.#source = options.source
    this.#sent = options.from
    this.#onEvent = options.onEvent
    this.#onResume = options.onResume ?? (() => {})
    this.#resuming = options.from !== undefined
    this.lastWriteAt = options.now
    this.openedAt = options.now
    this.endsAt = options.endsAt
    this.#write(`retry: ${RETRY_MS}\n\n`, options.now)
  }

  /** Whether a head has placed the stream (a stream opened before any head is known waits for one). */
  get placed (): boolean {
    return this.#sent !== undefined
  }

  /** Whether it has ended (its last retry: written) or was given up. */
  get ended (): boolean {
    return this.#ended
  }

  /**
   * Sends every event up to the end of `head`'s, in order; one catch-up at a time, which then
   * looks again. A head of 0 (none known) sends nothing. The event loop turns every
   * HEIGHTS_PER_TURN heights.
   */
  async catchUp (head: () => number, now: () => number): Promise<void> {
    if (this.#catchingUp) return
    this.#catchingUp = true
    try {
      let heights = 0
      for (let height = this.#next(head(), now()); !this.#ended && height <= head(); height = this.#next(head(), now())) {
        const events = await this.#source.at(height)
        for (const event of events) this.#send(event, now())
        this.#sent = { height, n: Infinity }
        if (++heights % HEIGHTS_PER_TURN === 0) await turn()
      }
    } finally {
      this.#catchingUp = false
    }
  }

  /**
   * The height whose events come next (the cursor's own while some of its events may be
   * unsent), the cursor first placed within what `head` lets the stream serve; Infinity while
   * no head is known.
   */
  #next (head: number, now: number): number {
    if (head === 0) return Infinity
    const sent = this.#sent ?? { height: head - 1, n: Infinity }
    const outside = head - sent.height > REPLAY_WINDOW || sent.height - head > AHEAD_WINDOW
    if (outside) this.reset(head, now)
    else this.#sent = sent
    if (this.#resuming) {
      this.#resuming = false
      this.#onResume(outside ? 'reset' : 'replayed')
    }
    const next = this.#sent as EventCursor
    return next.n === Infinity ? next.height + 1 : next.height
  }

  /** A comment, which keeps proxies from taking the stream for idle. */
  heartbeat (now: number): void {
    this.#write(': heartbeat\n\n', now)
  }

  /** Tells the client its cursor is out of the replay window: it refetches, and the stream goes on from `height`. */
  reset (height: number, now: number): void {
    this.#write(`event: reset\ndata: ${JSON.stringify({ height })}\n\n`, now)
    this.#sent = { height: height - 1, n: Infinity }
  }

  /** Ends the stream gracefully, asking the client to come back after `retryMs`. */
  end (retryMs: number, now: number): void {
    if (this.#ended) return
    this.#write(`retry: ${retryMs}\n\n`, now)
    this.#ended = true
    this.body.end()
  }

  /** Gives the stream up, unsent bytes and all (a client that does not read): the reply's socket goes with it. */
  destroy (): void {
    this.#ended = true
    this.body.destroy()
  }

  #send (event: ChainEvent, now: number): void {
    // Placed by #next before any event is sent.
    if (this.#ended || !isAfter(event, this.#sent as EventCursor)) return
    this.#write(`id: ${eventId(event)}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`, now)
    this.#sent = event
    this.#onEvent(event)
  }

  #write (text: string, now: number): void {
    if (this.#ended) return
    this.body.write(text)
    this.lastWriteAt = now
    // What the client has not taken: the body's buffers (the socket's own are above them, bounded by the kernel).
    if (this.body.writableLength + this.body.readableLength > MAX_BUFFERED_BYTES) this.destroy()
  }
}
