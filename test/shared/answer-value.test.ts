import t from 'tap'
import { AnswerSeal, SHARED_CONTENT_TYPES } from '../../src/shared/answer-value.js'

// A shared answer's value: what its builder seals is what a replica of the same pool opens,
// and anything else (another key, other bytes, another secret, a content type or body no
// route of ours sends) opens to nothing: a miss, and the replica builds its own.

const json = { contentType: 'application/json; charset=utf-8', body: Buffer.from('{"height":"7","é":true}') }

t.test('sealed and opened: the same bytes and content type, and no ETag in the value', async (t) => {
  for (const seal of [new AnswerSeal(undefined), new AnswerSeal('sixteen chars ok')]) {
    const value = seal.encode('k@7', json)
    t.same(seal.decode('k@7', value), json)
    t.equal(value.split('\n').length, 3, 'content type, digest, body')
  }
  const verified = { ...json, verification: 'verified; keys=5' }
  const seal = new AnswerSeal('sixteen chars ok')
  const value = seal.encode('k@7', verified)
  t.same(seal.decode('k@7', value), verified, 'an answer\'s X-Verification travels with it')
  t.equal(seal.decode('k@7', value.replace('verified; keys=5', 'verified; keys=6')), undefined, 'under the digest: another X-Verification is a miss')
  t.equal(seal.decode('k@7', value.replace('\tverified; keys=5', '')), undefined, 'and so is one taken away')
  t.same([...SHARED_CONTENT_TYPES], ['application/json; charset=utf-8', 'text/plain; charset=utf-8'])
})

t.test('anything but what the pool sealed for this key is a miss', async (t) => {
  const seal = new AnswerSeal('sixteen chars ok')
  const value = seal.encode('k@7', json)
  const [, digest] = value.split('\n') as [string, string]
  const cases: Record<string, string | undefined> = {
    nothing: undefined,
    'one line': 'application/json; charset=utf-8',
    'two lines': 'application/json; charset=utf-8\nabc',
    'a content type not on the list': `text/html\n${digest}\n{"height":"7","é":true}`,
    'other bytes': value.replace('true', 'false'),
    'a digest of another length': value.replace(digest, 'short')
  }
  for (const [what, planted] of Object.entries(cases)) t.equal(seal.decode('k@7', planted), undefined, what)
  t.equal(seal.decode('k@8', value), undefined, 'sealed for another key')
  t.equal(new AnswerSeal('another secret..').decode('k@7', value), undefined, 'another secret')
  t.equal(new AnswerSeal(undefined).decode('k@7', value), undefined, 'sealed with a secret, opened without')
  t.equal(seal.decode('k@7', new AnswerSeal(undefined).encode('k@7', json)), undefined, 'sealed without the secret (anyone can), opened with it')
  t.equal(seal.decode('k@7', seal.encode('k@7', { ...json, body: Buffer.from('{"a":') })), undefined, 'sealed, but not JSON')
  t.equal(seal.decode('k@7', seal.encode('k@7', { ...json, body: Buffer.from([0xff, 0xfe]) })), undefined, 'bytes that are not UTF-8 do not survive the store: a miss, never other bytes')
  const html = { contentType: 'text/html', body: Buffer.from('<script>') }
  t.equal(new AnswerSeal(undefined).decode('k@7', new AnswerSeal(undefined).encode('k@7', html)), undefined, 'sealed, digest and all, but a content type no route sends (without a secret anyone can seal)')
  const text = { contentType: 'text/plain; charset=utf-8', body: Buffer.from('ok') }
  t.same(seal.decode('t', seal.encode('t', text)), text, 'text is not parsed')
})
