import { createHash } from 'node:crypto'
import t from 'tap'
import { ADDRESS_PREFIX, pubkeyToAddress } from '../../src/verify/pubkey-address.js'
import { GoHexError } from '../../src/wire/go-hex.js'

// The Go service's test vector (common/queryapi/tests/debug_test.go, from decentralized-api).
const VECTOR_KEY = 'Au5ZQav3E36PZpGta2xUa8r9xEEo9Biph3fG5i3qaeSG'
const VECTOR_ADDRESS = 'gonka1jwrv4q8hpxc354pr87pt0pkulaep67e9s4z0ym'

t.test('the Go vector, from base64 and from hex', async (t) => {
  t.equal(pubkeyToAddress(VECTOR_KEY), VECTOR_ADDRESS)
  t.equal(pubkeyToAddress(Buffer.from(VECTOR_KEY, 'base64').toString('hex')), VECTOR_ADDRESS, 'lower-case hex')
  t.equal(pubkeyToAddress(Buffer.from(VECTOR_KEY, 'base64').toString('hex').toUpperCase()), VECTOR_ADDRESS, 'upper-case hex')
  t.equal(pubkeyToAddress(`${VECTOR_KEY.slice(0, 10)}\r\n${VECTOR_KEY.slice(10)}`), VECTOR_ADDRESS, 'Go\'s base64 skips CR and LF')
  t.equal(ADDRESS_PREFIX, 'gonka')
})

t.test('RIPEMD-160 of SHA-256, bech32 with the gonka prefix (checked with node:crypto and a hand-rolled bech32)', async (t) => {
  const key = Buffer.from('01234567890123456789012345678901')
  const hash = createHash('ripemd160').update(createHash('sha256').update(key).digest()).digest()
  t.equal(pubkeyToAddress(key.toString('base64')), bech32('gonka', hash))
})

t.test('base64 is tried first: a string valid as both is read as base64', async (t) => {
  const bytes = Buffer.from('abcd', 'base64')
  const hash = createHash('ripemd160').update(createHash('sha256').update(bytes).digest()).digest()
  t.equal(pubkeyToAddress('abcd'), bech32('gonka', hash))
})

t.test('neither base64 nor hex: Go\'s hex error', async (t) => {
  t.throws(() => pubkeyToAddress('notvalid!!!'), new GoHexError("encoding/hex: invalid byte: U+006E 'n'"))
  t.throws(() => pubkeyToAddress('abc'), new GoHexError('encoding/hex: odd length hex string'))
})

// BIP-173 bech32, written out from the specification.
function bech32 (prefix: string, data: Uint8Array): string {
  const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'
  const words: number[] = []
  let acc = 0
  let bits = 0
  for (const byte of data) {
    acc = (acc << 8) | byte
    bits += 8
    while (bits >= 5) {
      bits -= 5
      words.push((acc >> bits) & 31)
    }
  }
  if (bits > 0) words.push((acc << (5 - bits)) & 31)
  const polymod = (values: number[]): number => {
    const GEN = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
    let chk = 1
    for (const v of values) {
      const top = chk >> 25
      chk = ((chk & 0x1ffffff) << 5) ^ v
      for (let i = 0; i < 5; i++) if (((top >> i) & 1) === 1) chk ^= GEN[i] as number
    }
    return chk
  }
  const expanded = [...prefix].map((c) => c.charCodeAt(0) >> 5).concat([0], [...prefix].map((c) => c.charCodeAt(0) & 31))
  const mod = polymod([...expanded, ...words, 0, 0, 0, 0, 0, 0]) ^ 1
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >> (5 * (5 - i))) & 31)
  return `${prefix}1${[...words, ...checksum].map((w) => CHARSET[w]).join('')}`
}
