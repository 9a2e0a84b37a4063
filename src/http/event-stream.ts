import { PassThrough } from 'node:stream'
import { eventId, isAfter, type ChainEvent, type EventCursor } from '../chain/chain-events.js'

// One GET /v1/events stream (docs/waiting.md): Server-Sent Events written to a PassThrough the
// reply sends, each event at most once and never one below one already sent; it catches up
// from its cursor to the replica's head one height at a time, the same way whether it is
// replaying after a reconnect or following live.

/** The reconnect delay a stream asks of its client in normal operation, ms. */
export const RETRY_MS = 3000

/** Where the stream takes each height's events from (src/chain/event-log.ts). */
export interface EventSource {
  at (height: number): Promise<ChainEvent[]>
}

export class EventStream {
  readonly body = new PassThrough()
  readonly #source: EventSource
  readonly #onEvent: (event: ChainEvent) => void
  /** The last event sent (or the cursor the client resumed from). */
  #sent: EventCursor
  #catchingUp = false
  #ended = false
  /** When something was last written (a heartbeat is due HEARTBEAT_MS after). */
  lastWriteAt: number
  /** When it ends by its maximum age. */
  readonly endsAt: number

  constructor (options: { source: EventSource, from: EventCursor, now: number, endsAt: number, onEvent: (event: ChainEvent) => void }) {
    this.#source = options.source
    this.#sent = options.from
    this.#onEvent = options.onEvent
    this.lastWriteAt = options.now
    this.endsAt = options.endsAt
    this.#write(`retry: ${RETRY_MS}\n\n`, options.now)
  }

  /** Sends every event up to the end of `head`'s, in order; one catch-up at a time, which then looks again. */
  async catchUp (head: () => number, now: () => number): Promise<void> {
    if (this.#catchingUp) return
    this.#catchingUp = true
    try {
      for (let height = this.#next(); !this.#ended && height <= head(); height = this.#next()) {
        const events = await this.#source.at(height)
        for (const event of events) this.#send(event, now())
        this.#sent = { height, n: Infinity }
      }
    } finally {
      this.#catchingUp = false
    }
  }

  /** The height whose events come next: the cursor's own while some of its events may be unsent. */
  #next (): number {
    return this.#sent.n === Infinity ? this.#sent.height + 1 : this.#sent.height
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

  #send (event: ChainEvent, now: number): void {
    if (this.#ended || !isAfter(event, this.#sent)) return
    this.#write(`id: ${eventId(event)}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`, now)
    this.#sent = event
    this.#onEvent(event)
  }

  #write (text: string, now: number): void {
    this.body.write(text)
    this.lastWriteAt = now
  }
}
