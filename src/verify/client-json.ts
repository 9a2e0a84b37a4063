// A JSON body a client sent to a verify route, parsed with two guards JSON.parse lacks:
//
// - Nesting depth. JSON.parse itself copes with any depth, but what is parsed in the worker
//   thread has to be copied back to the event loop, and the copy's deserialiser overflows
//   its stack a few thousand levels down (a task that never settles). A real block is about
//   ten levels deep; anything deeper than MAX_JSON_DEPTH is refused before it is parsed.
// - Integers beyond 2^53. CometBFT's voting powers go up to 1152921504606846975, and
//   /v1/epochs/{epoch}/participants writes them as exact JSON numbers; JSON.parse would round
//   them. An integer of more than 15 digits is kept exact as its decimal string (the verify
//   routes take 64-bit integers as numbers or decimal strings).
//
// One pass over the bytes finds both, outside strings only; it is linear and allocates
// nothing unless a long integer has to be quoted.

export const MAX_JSON_DEPTH = 64

/** Digits a double holds exactly, whatever they are (2^53 has 16). */
const EXACT_DIGITS = 15

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_ARRAY = 0x5b
const OPEN_OBJECT = 0x7b
const CLOSE_ARRAY = 0x5d
const CLOSE_OBJECT = 0x7d
const MINUS = 0x2d
const ZERO = 0x30
const NUMBER_BYTES = new Set(Array.from('0123456789.eE+-', (c) => c.charCodeAt(0)))

export type ClientJson = { readonly ok: true, readonly value: unknown } | { readonly ok: false, readonly error: string }

export function parseClientJson (bytes: Uint8Array): ClientJson {
  const longIntegers: Array<readonly [number, number]> = []
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number
    if (inString) {
      if (byte === BACKSLASH) i++
      else if (byte === QUOTE) inString = false
    } else if (byte === QUOTE) {
      inString = true
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > MAX_JSON_DEPTH) return { ok: false, error: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` }
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      depth--
    } else if (byte === MINUS || isDigit(byte)) {
      const end = numberEnd(bytes, i)
      if (isLongInteger(bytes, i, end)) longIntegers.push([i, end])
      i = end - 1
    }
  }
  const text = longIntegers.length === 0 ? toText(bytes, 0, bytes.length) : quoted(bytes, longIntegers)
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (err) {
    return { ok: false, error: (err as SyntaxError).message }
  }
}

function isDigit (byte: number): boolean {
  return byte >= ZERO && byte <= ZERO + 9
}

/** Where the number-like run starting at `start` ends (JSON.parse judges whether it is a number). */
function numberEnd (bytes: Uint8Array, start: number): number {
  let end = start + 1
  while (end < bytes.length && NUMBER_BYTES.has(bytes[end] as number)) end++
  return end
}

function isLongInteger (bytes: Uint8Array, start: number, end: number): boolean {
  const digitsFrom = bytes[start] === MINUS ? start + 1 : start
  // A leading zero is not JSON: left for JSON.parse to refuse.
  if (end - digitsFrom <= EXACT_DIGITS || bytes[digitsFrom] === ZERO) return false
  for (let i = digitsFrom; i < end; i++) if (!isDigit(bytes[i] as number)) return false
  return true
}

function quoted (bytes: Uint8Array, ranges: ReadonlyArray<readonly [number, number]>): string {
  let text = ''
  let from = 0
  for (const [start, end] of ranges) {
    text += `${toText(bytes, from, start)}"${toText(bytes, start, end)}"`
    from = end
  }
  return text + toText(bytes, from, bytes.length)
}

function toText (bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8')
}
