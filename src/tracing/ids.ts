import { randomFillSync } from 'node:crypto'

// Trace and span ids: random bytes drawn 4 KiB at a time (one system call, and one conversion
// to hex, per ~170 requests), each id a slice of that hex, as the traceparent and the
// serializer both take them.

const POOL_BYTES = 4096
const pool = Buffer.alloc(POOL_BYTES)
let hex = ''
let used = POOL_BYTES * 2

function draw (digits: number): string {
  if (used + digits > hex.length) {
    randomFillSync(pool)
    hex = pool.toString('hex')
    used = 0
  }
  const id = hex.slice(used, used + digits)
  used += digits
  // All zeros is an invalid id (W3C Trace Context); at 2^-64 it is drawn again rather than sent.
  return id === ZEROS[digits] ? draw(digits) : id
}

const ZEROS: Record<number, string> = { 16: '0'.repeat(16), 32: '0'.repeat(32) }

/** A new trace id: 32 hex digits. */
export function newTraceId (): string {
  return draw(32)
}

/** A new span id: 16 hex digits. */
export function newSpanId (): string {
  return draw(16)
}
