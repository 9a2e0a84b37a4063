import t from 'tap'
import { KeyPathError, keyPathToKeys, pathEscape } from '../../src/verify/key-path.js'

t.test('pathEscape is Go\'s url.PathEscape', async (t) => {
  // Go: url.PathEscape("a b/c;d,e?f:g@h&i=j+k$l-m_n.o~p") == "a%20b%2Fc%3Bd%2Ce%3Ff:g@h&i=j+k$l-m_n.o~p"
  t.equal(pathEscape(Buffer.from('a b/c;d,e?f:g@h&i=j+k$l-m_n.o~p')), 'a%20b%2Fc%3Bd%2Ce%3Ff:g@h&i=j+k$l-m_n.o~p')
  t.equal(pathEscape(Uint8Array.of(0, 0x2a, 0x7f, 0x80, 0xff, 0x25)), '%00%2A%7F%80%FF%25')
  // The ActiveParticipants key of epoch 42, as the Go service wrote its key path.
  const key = Buffer.concat([Buffer.from('ActiveParticipants/value/'), Buffer.from('000000000000002a', 'hex'), Buffer.from('/')])
  t.equal(pathEscape(key), 'ActiveParticipants%2Fvalue%2F%00%00%00%00%00%00%00%2A%2F')
})

t.test('keyPathToKeys splits on "/" and undoes each part\'s escaping', async (t) => {
  const key = Uint8Array.of(...Buffer.from('ActiveParticipants/value/'), 0, 0, 0, 0, 0, 0, 0, 42, 0x2f)
  t.same(keyPathToKeys(`/inference/${pathEscape(key)}`), [Buffer.from('inference'), key])
  t.same(keyPathToKeys('/x:0aFF/plain+text/%41%62'), [Uint8Array.of(10, 255), Buffer.from('plain+text'), Buffer.from('Ab')], 'hex parts and + kept as is')
  t.same(keyPathToKeys('/'), [new Uint8Array()])
  t.same(keyPathToKeys('/é'), [Buffer.from('é')], 'bytes of the UTF-8 text')
})

t.test('CometBFT\'s errors', async (t) => {
  const cases: Array<[string, string]> = [
    ['', "key path string must start with a forward slash '/'"],
    ['inference', "key path string must start with a forward slash '/'"],
    ['/a/x:0g', "decoding hex-encoded part #1: /x:0g: encoding/hex: invalid byte: U+0067 'g'"],
    ['/%zz', 'decoding url-encoded part #0: /%zz: invalid URL escape "%zz"'],
    ['/ok/a%4', 'decoding url-encoded part #1: /a%4: invalid URL escape "%4"'],
    ['/%41%4%41', 'decoding url-encoded part #0: /%41%4%41: invalid URL escape "%4%"'],
    ['/%', 'decoding url-encoded part #0: /%: invalid URL escape "%"']
  ]
  for (const [path, message] of cases) t.throws(() => keyPathToKeys(path), new KeyPathError(message), JSON.stringify(path))
})
