import { randomFillSync } from 'node:crypto'

// Trace and span ids: random bytes drawn 4 KiB at a time (one system call, and one conversion
// to hex, per ~170 requests), each id a slice of that hex, as the traceparent and the
// serializer both take them.

const POOL_BYTES = 4096
const ZEROS: Record<number, string> = { 16: '0'.repeat(16), 32: '0'.repeat(32) }

/** Ids sliced from a pool of random bytes, refilled by `fill` when used up. */
export class IdPool {
  readonly #fill: (buffer: Buffer) => void
  readonly #pool = Buffer.alloc(POOL_BYTES)
  #hex = ''
  #used = POOL_BYTES * 2

  constructor (fill: (buffer: Buffer) => void = randomFillSync) {
    this.#fill = fill
  }

  /** `digits` lower-case hex digits, never all zeros. */
  draw (digits: number): string {
    for (;;) {
      if (this.#used + digits > this.#hex.length) {
        this.#fill(this.#pool)
        this.#hex = this.#pool.toString('hex')
        this.#used = 0
      }
      const id = this.#hex.slice(this.#used, this.#used + digits)
      this.#used += digits
      // All zeros is an invalid id (W3C Trace Context); at 2^-64 it is drawn again rather than sent.
      if (id !== ZEROS[digits]) return id
    }
  }
}

const ids = new IdPool()

/** A new trace id: 32 hex digits. */
export function newTraceId (): string {
  return ids.draw(32)
}

/** A new span id: 16 hex digits. */
export function newSpanId (): string {
  return ids.draw(16)
}
