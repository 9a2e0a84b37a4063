import { NamedError } from '../named-error.js'
import { decodeHexGo } from '../wire/go-hex.js'

// A merkle key path, CometBFT's way of naming one key per proof layer: "/inference/<key>",
// each part URL-path-escaped (or "x:" + hex). The Go service built the path with Go's
// url.PathEscape and the proof runtime split it back with merkle.KeyPathToKeys; both are
// reproduced here, error texts included, so a key that needs escaping (the epoch's 8 raw
// bytes do) gives the same bytes, and a mismatch the same message, as in Go.

/** A key path the runtime cannot split; the message is CometBFT's. */
export class KeyPathError extends NamedError {}

const HEX_DIGITS = '0123456789ABCDEF'

/** Go's url.PathEscape: escapes everything but A-Z a-z 0-9 - _ . ~ and : @ & = + $, as %XX. */
export function pathEscape (bytes: Uint8Array): string {
  let out = ''
  for (const byte of bytes) {
    const char = String.fromCharCode(byte)
    if (/^[A-Za-z0-9\-_.~:@&=+$]$/.test(char)) out += char
    else out += `%${HEX_DIGITS[byte >> 4] as string}${HEX_DIGITS[byte & 15] as string}`
  }
  return out
}

/** CometBFT's merkle.KeyPathToKeys: the raw key of each "/"-separated part, first part first. */
export function keyPathToKeys (path: string): Uint8Array[] {
  if (!path.startsWith('/')) throw new KeyPathError("key path string must start with a forward slash '/'")
  return path.slice(1).split('/').map((part, i) => {
    if (part.startsWith('x:')) {
      try {
        return decodeHexGo(part.slice(2))
      } catch (err) {
        throw new KeyPathError(`decoding hex-encoded part #${i}: /${part}: ${(err as Error).message}`)
      }
    }
    const key = pathUnescape(part)
    if (key === undefined) {
      const bad = part.slice(part.search(/%(?![0-9A-Fa-f]{2})/)).slice(0, 3)
      throw new KeyPathError(`decoding url-encoded part #${i}: /${part}: invalid URL escape ${JSON.stringify(bad)}`)
    }
    return key
  })
}

/** Go's url.PathUnescape over the part's bytes; undefined on a malformed %-escape. */
function pathUnescape (part: string): Uint8Array | undefined {
  const src = Buffer.from(part, 'utf8')
  const out: number[] = []
  for (let i = 0; i < src.length; i++) {
    const byte = src[i] as number
    if (byte !== 0x25) {
      out.push(byte)
      continue
    }
    const hex = src.subarray(i + 1, i + 3).toString('latin1')
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined
    out.push(Number.parseInt(hex, 16))
    i += 2
  }
  return Uint8Array.from(out)
}
