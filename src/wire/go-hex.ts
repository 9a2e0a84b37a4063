// Go's encoding/hex.DecodeString, error texts included: the Go service put them in its 400
// answers ("Error decoding app hash: encoding/hex: invalid byte: U+0067 'g'"), and clients
// that match on them keep working.

import { NamedError } from '../named-error.js'

/** A string Go's hex.DecodeString rejects; the message is Go's. */
export class GoHexError extends NamedError {}

/** Bytes of a hex string (either case), exactly as Go decodes it, or a GoHexError. */
export function decodeHexGo (text: string): Uint8Array {
  // Go works on the string's bytes, so a non-ASCII character is reported by its first byte.
  const src = Buffer.from(text, 'utf8')
  const out = new Uint8Array(src.length >> 1)
  let j = 1
  for (; j < src.length; j += 2) {
    const high = nibble(src[j - 1] as number)
    const low = nibble(src[j] as number)
    out[(j - 1) >> 1] = (high << 4) | low
  }
  // An invalid last character is an earlier problem than the odd length, as in Go.
  if (src.length % 2 === 1) {
    nibble(src[j - 1] as number)
    throw new GoHexError('encoding/hex: odd length hex string')
  }
  return out
}

function nibble (byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30
  const lower = byte | 0x20
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10
  throw new GoHexError(`encoding/hex: invalid byte: ${formatRune(byte)}`)
}

/** Go's %#U of rune(byte): U+0067 'g', or U+0000 alone when the character is not printable. */
function formatRune (byte: number): string {
  const code = `U+${byte.toString(16).toUpperCase().padStart(4, '0')}`
  // strconv.IsPrint over Latin-1: controls, NBSP (U+00A0) and the soft hyphen (U+00AD) are not.
  const printable = (byte >= 0x20 && byte < 0x7f) || (byte > 0xa0 && byte !== 0xad)
  return printable ? `${code} '${String.fromCharCode(byte)}'` : code
}
