import { randomFillSync } from 'node:crypto'

// Trace and span ids: random bytes drawn from a pool filled 4 KiB at a time (one system call
// per ~170 spans), turned into hex once, as the traceparent and the serializer both take them.

const POOL_BYTES = 4096
const pool = Buffer.alloc(POOL_BYTES)
let used = POOL_BYTES

function draw (bytes: number): string {
  if (used + bytes > POOL_BYTES) {
    randomFillSync(pool)
    used = 0
  }
  const hex = pool.toString('hex', used, used + bytes)
  used += bytes
  // All zeros is an invalid id (W3C Trace Context); at 2^-64 it is drawn again rather than sent.
  return hex === ZEROS[bytes] ? draw(bytes) : hex
}

const ZEROS: Record<number, string> = { 8: '0'.repeat(16), 16: '0'.repeat(32) }

/** A new trace id: 32 hex digits. */
export function newTraceId (): string {
  return draw(16)
}

/** A new span id: 16 hex digits. */
export function newSpanId (): string {
  return draw(8)
}
