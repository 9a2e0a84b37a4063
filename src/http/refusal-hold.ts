import type { FastifyReply } from 'fastify'
import { REAL_CLOCK, type Clock } from '../clock.js'

// A client refused for its excess is answered only once its Retry-After has passed: a closed
// loop of requests (a scraper's connections, each sending the next as soon as the last is
// answered) is slowed to one request a connection per Retry-After, instead of being refused
// faster than it was served, and its refusals cannot take the replica's CPU. Bounded: beyond
// `limit` held at once a refusal is answered at once (a held one costs a socket and a little
// memory, no CPU). Released at once on close, so the drain never waits on them.

export const HOLD_LIMIT = 4096

interface Held {
  readonly reply: FastifyReply
  readonly body: Buffer
  readonly due: number
}

export class RefusalHold {
  readonly #holdMs: number
  readonly #limit: number
  readonly #clock: Clock
  // All held for the same time: arrival order is due order.
  #held: Held[] = []
  #cancel: (() => void) | undefined

  constructor (holdMs: number, limit = HOLD_LIMIT, clock: Clock = REAL_CLOCK) {
    this.#holdMs = holdMs
    this.#limit = limit
    this.#clock = clock
  }

  /** Refusals waiting to be sent. */
  get size (): number {
    return this.#held.length
  }

  /** Sends `body` on `reply` after the hold, or now when as many as the limit are held. */
  hold (reply: FastifyReply, body: Buffer): void {
    if (this.#held.length >= this.#limit) {
      reply.send(body)
      return
    }
    this.#held.push({ reply, body, due: this.#clock.now() + this.#holdMs })
    if (this.#cancel === undefined) this.#arm(this.#holdMs)
  }

  /** Sends every refusal held now (close, drain). */
  releaseAll (): void {
    this.#cancel?.()
    this.#cancel = undefined
    const held = this.#held
    this.#held = []
    for (const { reply, body } of held) reply.send(body)
  }

  #arm (ms: number): void {
    this.#cancel = this.#clock.after(ms, () => this.#releaseDue())
  }

  #releaseDue (): void {
    this.#cancel = undefined
    const now = this.#clock.now()
    let count = 0
    while (count < this.#held.length && (this.#held[count] as Held).due <= now) count++
    const due = this.#held.splice(0, count)
    for (const { reply, body } of due) reply.send(body)
    const next = this.#held[0]
    if (next !== undefined) this.#arm(Math.max(1, next.due - now))
  }
}
