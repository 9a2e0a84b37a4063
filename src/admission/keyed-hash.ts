import { randomBytes } from 'node:crypto'

// A hash an outsider cannot aim at: HalfSipHash-2-4 (Aumasson and Bernstein's SipHash on 32-bit
// words, the reference implementation's 64-bit output) under a key drawn at random when the
// process starts. Fair share places each client in its counters by it (fair-share.ts): with a
// fixed hash (FNV-1a with fixed seeds, before) anyone could compute, offline, addresses that
// share a victim's counters (from one IPv6 /48, two /64s covering a victim's in 2,884 tries) and
// make the victim's one request count as theirs; with a secret key, what collides in one
// process is a matter of chance in every other, and which addresses do cannot be computed.
// A PRF, not a cryptographic digest: 4 bytes a round, a few hundred ns for an address.

/** A 64-bit key, as two 32-bit words (little-endian, as the reference reads its key bytes). */
export type HashKey = readonly [number, number]

/** A fresh key from the system's CSPRNG: the process's own. */
export function randomHashKey (): HashKey {
  const bytes = randomBytes(8)
  return [bytes.readUInt32LE(0), bytes.readUInt32LE(4)]
}

const rotl = (x: number, bits: number): number => (x << bits) | (x >>> (32 - bits))

/** Four bytes of `text` from `at`, little-endian, each character taken as one byte. */
const wordAt = (text: string, at: number): number =>
  (text.charCodeAt(at) & 0xff) | ((text.charCodeAt(at + 1) & 0xff) << 8) | ((text.charCodeAt(at + 2) & 0xff) << 16) | ((text.charCodeAt(at + 3) & 0xff) << 24)

/** The message's last word: its length in the top byte, the bytes past its whole words below. */
function lastWord (text: string, whole: number): number {
  let word = text.length << 24
  for (let i = whole; i < text.length; i++) word |= (text.charCodeAt(i) & 0xff) << (8 * (i - whole))
  return word
}

/**
 * The two 32-bit words of `text`'s HalfSipHash-2-4-64 under `key`, each character taken as one
 * byte (its low 8 bits: a client is an address, ASCII). One loop of SipRounds over local
 * variables (twice as fast as a round function over shared state, measured): two rounds per
 * word of the message, then four, and four more, each four giving one word of the output.
 */
export function keyedHash (text: string, key: HashKey): [number, number] {
  const [k0, k1] = key
  let v0 = k0
  let v1 = k1 ^ 0xee
  let v2 = 0x6c796765 ^ k0
  let v3 = 0x74656462 ^ k1
  const whole = text.length - (text.length % 4)
  const absorbing = 2 * (whole / 4 + 1)
  let word = 0
  let first = 0
  for (let round = 0; round < absorbing + 8; round++) {
    if (round < absorbing && round % 2 === 0) {
      word = 2 * round < whole ? wordAt(text, 2 * round) : lastWord(text, whole)
      v3 ^= word
    } else if (round === absorbing) {
      v2 ^= 0xee
    } else if (round === absorbing + 4) {
      first = (v1 ^ v3) >>> 0
      v1 ^= 0xdd
    }
    v0 = (v0 + v1) | 0
    v1 = rotl(v1, 5) ^ v0
    v0 = rotl(v0, 16)
    v2 = (v2 + v3) | 0
    v3 = rotl(v3, 8) ^ v2
    v0 = (v0 + v3) | 0
    v3 = rotl(v3, 7) ^ v0
    v2 = (v2 + v1) | 0
    v1 = rotl(v1, 13) ^ v2
    v2 = rotl(v2, 16)
    if (round < absorbing && round % 2 === 1) v0 ^= word
  }
  return [first, (v1 ^ v3) >>> 0]
}
