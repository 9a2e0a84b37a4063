// Protocol buffers' wire format (https://protobuf.dev/programming-guides/encoding/), only what
// an OTLP trace export needs: varints, fixed64 times, length-delimited strings, bytes and
// nested messages, written in one pass into one growing buffer. A nested message's length is
// not known before its fields are written: a byte or two is set aside for it, and the message
// is moved when its length needs another size (rare: an attribute over 127 bytes).

/** The wire types: VARINT 0, I64 1, LEN 2, I32 5. */
export const VARINT = 0
export const I64 = 1
export const LEN = 2
export const I32 = 5

/** A field's tag, for fields 1 to 15: one byte (field 16 and later take two: write them with raw()). */
export function tag (field: number, wireType: number): number {
  if (field < 1 || field > 15) throw new RangeError(`field ${field} has a two-byte tag`)
  return (field << 3) | wireType
}

function varintSize (value: number): number {
  if (value < 0x80) return 1
  if (value < 0x4000) return 2
  if (value < 0x200000) return 3
  /* c8 ignore next */ // a length of 256 MB or more: an export batch is ~110 KB, a string at most the request's URL
  return value < 0x10000000 ? 4 : 5
}

/** The nanoseconds of the Unix epoch at performance.timeOrigin, as whole seconds and the nanoseconds past them. */
const ORIGIN_S = Math.floor(performance.timeOrigin / 1000)
const ORIGIN_NS = Math.round((performance.timeOrigin - ORIGIN_S * 1000) * 1e6)
// ORIGIN_S × 10^9 split into 32-bit halves, exactly (BigInt once, at load).
const ORIGIN_HI = Number((BigInt(ORIGIN_S) * 1_000_000_000n) >> 32n)
const ORIGIN_LO = Number((BigInt(ORIGIN_S) * 1_000_000_000n) & 0xffffffffn)
const TWO_32 = 2 ** 32

/** Each hex digit's value, by its character code (ids are validated or made as lower-case hex). */
const NIBBLE = new Uint8Array(128)
for (let i = 0; i < 16; i++) NIBBLE['0123456789abcdef'.charCodeAt(i)] = i

export class ProtobufWriter {
  #buffer: Buffer
  pos = 0

  constructor (initialBytes = 64 * 1024) {
    this.#buffer = Buffer.allocUnsafe(initialBytes)
  }

  /** Makes room for `bytes` more. */
  #room (bytes: number): void {
    if (this.pos + bytes <= this.#buffer.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.pos + bytes))
    this.#buffer.copy(grown, 0, 0, this.pos)
    this.#buffer = grown
  }

  /** Bytes encoded ahead of time (tags, constant keys and messages). */
  raw (bytes: Uint8Array): void {
    this.#room(bytes.length)
    this.#buffer.set(bytes, this.pos)
    this.pos += bytes.length
  }

  byte (value: number): void {
    this.#room(1)
    this.#buffer[this.pos++] = value
  }

  /** A non-negative integer below 2^53 as a varint. */
  varint (value: number): void {
    this.#room(8)
    const buffer = this.#buffer
    while (value > 0x7f) {
      buffer[this.pos++] = (value % 0x80) | 0x80
      value = Math.floor(value / 0x80)
    }
    buffer[this.pos++] = value
  }

  /** A string's UTF-8 bytes, length first. */
  string (text: string): void {
    const length = text.length
    // Short ASCII (methods, paths, ids, names: nearly every string here) byte by byte: cheaper
    // than a call into Buffer.write for a few dozen bytes.
    if (length < 0x80) {
      this.#room(1 + length)
      const buffer = this.#buffer
      const start = this.pos
      let at = start + 1
      for (let i = 0; i < length; i++) {
        const code = text.charCodeAt(i)
        if (code >= 0x80) {
          at = -1
          break
        }
        buffer[at++] = code
      }
      if (at >= 0) {
        buffer[start] = length
        this.pos = at
        return
      }
    }
    // The length's size guessed from ASCII; room for UTF-8's worst, 3 bytes per UTF-16 unit.
    const reserved = varintSize(length)
    this.#room(reserved + length * 3)
    const start = this.pos
    this.pos = start + reserved + this.#buffer.write(text, start + reserved, 'utf8')
    this.#length(start, reserved)
  }

  /** Lower-case hex digits (an id) as the bytes they spell, length first. */
  hex (digits: string): void {
    const bytes = digits.length >> 1
    this.#room(1 + bytes)
    const buffer = this.#buffer
    let at = this.pos
    buffer[at++] = bytes
    for (let i = 0; i < digits.length; i += 2) buffer[at++] = (NIBBLE[digits.charCodeAt(i)] as number) << 4 | (NIBBLE[digits.charCodeAt(i + 1)] as number)
    this.pos = at
  }

  /** A fixed32, little-endian. */
  fixed32 (value: number): void {
    this.#room(4)
    this.#buffer.writeUInt32LE(value, this.pos)
    this.pos += 4
  }

  /** A performance.now() time as fixed64 nanoseconds since the Unix epoch. */
  time (ms: number): void {
    // Below 2^53 for 104 days of uptime: exact, and added to the origin in 32-bit halves.
    const ns = Math.round(ms * 1e6) + ORIGIN_NS
    const nsHi = Math.floor(ns / TWO_32)
    let lo = ORIGIN_LO + (ns - nsHi * TWO_32)
    let hi = ORIGIN_HI + nsHi
    if (lo >= TWO_32) {
      lo -= TWO_32
      hi += 1
    }
    this.#room(8)
    this.#buffer.writeUInt32LE(lo, this.pos)
    this.#buffer.writeUInt32LE(hi, this.pos + 4)
    this.pos += 8
  }

  /** Starts a nested message (after its tag), `reserved` bytes set aside for its length: end(start, reserved) with the position this returns. */
  begin (reserved: number): number {
    this.#room(reserved)
    const start = this.pos
    this.pos += reserved
    return start
  }

  /** Ends the nested message begin() started: writes its length, moving it if the length took another size. */
  end (start: number, reserved: number): void {
    this.#length(start, reserved)
  }

  #length (start: number, reserved: number): void {
    const length = this.pos - start - reserved
    const size = varintSize(length)
    if (size !== reserved) {
      this.#room(size - reserved)
      this.#buffer.copyWithin(start + size, start + reserved, this.pos)
      this.pos += size - reserved
    }
    let value = length
    let at = start
    while (value > 0x7f) {
      this.#buffer[at++] = (value & 0x7f) | 0x80
      value >>>= 7
    }
    this.#buffer[at] = value
  }

  /**
   * What was written, and a fresh start in a new buffer of the same size: the exporter may
   * send the bytes again later (a retry) while this writer goes on, and a new buffer costs
   * less than a copy (it is not zeroed).
   */
  take (): Uint8Array {
    const bytes = this.#buffer.subarray(0, this.pos)
    this.#buffer = Buffer.allocUnsafe(this.#buffer.length)
    this.pos = 0
    return bytes
  }
}

/** The bytes of a message built ahead of time with `build` (the resource, the scopes, constant attributes). */
export function encoded (build: (writer: ProtobufWriter) => void): Uint8Array {
  const writer = new ProtobufWriter(256)
  build(writer)
  return writer.take()
}
