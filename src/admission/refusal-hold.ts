import type { FastifyReply } from 'fastify'
import { REAL_CLOCK, type Clock } from '../clock.js'

// A client refused for its excess is answered only once its Retry-After has passed: a closed
// loop of requests (a scraper's connections, each sending the next as soon as the last is
// answered) is slowed to one request a connection per Retry-After, instead of being refused
// faster than it was served, and its refusals cannot take the replica's CPU. Bounded: beyond
// `limit` held at once a refusal is answered at once (a held one costs a socket and a little
// memory, no CPU). Released at once on close, so the drain never waits on them.
// Each is held for a random time between one and two Retry-Afters: refusals made in the same
// instant (a scraper's thousand connections refused together) come back spread over a
// second instead of as one wave, which would take the event loop from everyone for as long
// as it takes to read them (measured: polite clients' p90 beside a closed loop of 1,024
// connections 42-48 ms with a fixed hold, 17-21 ms with a spread one; BENCHMARKS.md, benchmark 16).

// Each is a reply the client's open connection already holds, and 40 bytes here: a scraper of 4,096
// connections (issue 41's largest) is held whole, with room for several of them.
export const HOLD_LIMIT = 16_384

// Refusals sent in one turn of the event loop: when it comes back late (it was busy), more are
// due than a turn should take (each ~50 µs): the rest go next turn, after the I/O that waited,
// the other clients' requests among it.
export const RELEASE_BATCH = 64

/**
 * Held refusals are sent at this rate at most, the rest waiting on past their hold, in due
 * order: each costs its release and the request its client sends next (~0.1 ms of the event
 * loop together, a tenth of a core at this rate), so a scraper's thousands of connections
 * cannot take more, however many it opens (measured beside one of 4,096, with the far-over
 * pace: the polite clients' p99 133 ms before, 20-53 ms; BENCHMARKS.md, benchmark 16).
 */
export const RELEASE_PER_S = 1000
const RELEASE_INTERVAL_MS = 1000 / RELEASE_PER_S

interface Held {
  readonly reply: FastifyReply
  readonly body: Buffer
  readonly due: number
}

export class RefusalHold {
  readonly #holdMs: number
  readonly #limit: number
  readonly #clock: Clock
  readonly #random: () => number
  // In due order.
  #held: Held[] = []
  #cancel: (() => void) | undefined
  // How far the release rate is spent: a release each RELEASE_INTERVAL_MS up to this time.
  #releasedUntil = -Infinity

  constructor (holdMs: number, limit = HOLD_LIMIT, clock: Clock = REAL_CLOCK, random: () => number = Math.random) {
    this.#holdMs = holdMs
    this.#limit = limit
    this.#clock = clock
    this.#random = random
  }

  /** Refusals waiting to be sent. */
  get size (): number {
    return this.#held.length
  }

  /** Sends `body` on `reply` after one to two holds, or now when as many as the limit are held. */
  hold (reply: FastifyReply, body: Buffer): void {
    if (this.#held.length >= this.#limit) {
      reply.send(body)
      return
    }
    const now = this.#clock.now()
    const due = now + this.#holdMs * (1 + this.#random())
    const at = this.#placeOf(due)
    this.#held.splice(at, 0, { reply, body, due })
    // The new one is due first: the timer moves to it.
    if (at === 0) {
      this.#cancel?.()
      this.#arm(due - now)
    }
  }

  /** Where a refusal due at `due` goes in due order: after every one due no later (a binary search). */
  #placeOf (due: number): number {
    let low = 0
    let high = this.#held.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if ((this.#held[middle] as Held).due <= due) low = middle + 1
      else high = middle
    }
    return low
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
    // The rate not spent since the last release, a batch at most (a turn's worth after a rest).
    const spentUntil = Math.max(this.#releasedUntil, now - RELEASE_BATCH * RELEASE_INTERVAL_MS)
    const allowed = Math.min(this.#held.length, Math.floor((now - spentUntil) / RELEASE_INTERVAL_MS))
    let count = 0
    while (count < allowed && (this.#held[count] as Held).due <= now) count++
    this.#releasedUntil = spentUntil + count * RELEASE_INTERVAL_MS
    const due = this.#held.splice(0, count)
    for (const { reply, body } of due) reply.send(body)
    const next = this.#held[0]
    if (next !== undefined) this.#arm(Math.max(RELEASE_INTERVAL_MS, next.due - now))
  }
}
