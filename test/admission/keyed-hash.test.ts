import t from 'tap'
import { keyedHash, randomHashKey, type HashKey } from '../../src/admission/keyed-hash.js'

// HalfSipHash-2-4-64 as its reference implementation computes it (the reference's test vectors:
// key bytes 00..07, messages 00..n-1, vectors_hsip64), and a key of the process's own.

const REFERENCE = ['218d1f59b9b83cc8', 'be552412f8387315', '064f39ef7c50eb57', 'ce0f1a45f7060679', 'd5e78a175be52ea1',
  'cb9d7c3f2f3db580', 'ce3e91358aa2bc25', 'ff202728b07bc684', 'edfee820bce4858c', '5b51cccc13888307']

const littleEndian = (word: number): string => [0, 8, 16, 24].map((shift) => ((word >>> shift) & 0xff).toString(16).padStart(2, '0')).join('')

t.test('the reference\'s test vectors, messages of 0 to 9 bytes (every tail length, one and two whole words)', async (t) => {
  const key: HashKey = [0x03020100, 0x07060504]
  for (const [length, expected] of REFERENCE.entries()) {
    const message = String.fromCharCode(...Array.from({ length }, (_, i) => i))
    const [first, second] = keyedHash(message, key)
    t.equal(littleEndian(first) + littleEndian(second), expected, `${length} bytes`)
  }
})

t.test('each key its own: a fresh key per call, and one address hashed apart under two keys', async (t) => {
  const [a, b] = [randomHashKey(), randomHashKey()]
  t.notSame(a, b)
  t.notSame(keyedHash('198.51.100.7', a), keyedHash('198.51.100.7', b))
  t.same(keyedHash('198.51.100.7', a), keyedHash('198.51.100.7', a), 'and the same under one key')
})
