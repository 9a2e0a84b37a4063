import t from 'tap'
import { decodeHexGo, GoHexError } from '../../src/wire/go-hex.js'

t.test('decodes hex in either case, as Go does', async (t) => {
  t.same(decodeHexGo('00ff7Fa0'), Uint8Array.of(0x00, 0xff, 0x7f, 0xa0))
  t.same(decodeHexGo(''), new Uint8Array())
})

t.test('Go\'s error texts: the first bad byte, else an odd length', async (t) => {
  const cases: Array<[string, string]> = [
    ['0g', "encoding/hex: invalid byte: U+0067 'g'"],
    ['g0', "encoding/hex: invalid byte: U+0067 'g'"],
    ['abc', 'encoding/hex: odd length hex string'],
    // An invalid last character is reported before the odd length.
    ['abz', "encoding/hex: invalid byte: U+007A 'z'"],
    ['zz0', "encoding/hex: invalid byte: U+007A 'z'"],
    ['0\n', 'encoding/hex: invalid byte: U+000A'],
    ['00 1', "encoding/hex: invalid byte: U+0020 ' '"],
    ['0\x7f', 'encoding/hex: invalid byte: U+007F'],
    // Go works on bytes: é is C3 A9 in UTF-8.
    ['0é', "encoding/hex: invalid byte: U+00C3 'Ã'"],
    // Only a lead byte (C2 and up) can be the first bad one of a multi-byte character.
    ['0\u00a0', "encoding/hex: invalid byte: U+00C2 'Â'"],
    ['\u00ad0', "encoding/hex: invalid byte: U+00C2 'Â'"]
  ]
  for (const [text, message] of cases) {
    t.throws(() => decodeHexGo(text), new GoHexError(message), JSON.stringify(text))
  }
})
