import t from 'tap'
import { MAX_JSON_DEPTH, parseClientJson } from '../../src/verify/client-json.js'

const parse = (text: string): ReturnType<typeof parseClientJson> => parseClientJson(Buffer.from(text))

t.test('integers beyond 2^53 are kept exact as decimal strings; shorter ones and other numbers stay numbers', async (t) => {
  t.same(parse('{"p":1152921504606846975,"q":-9223372036854775808,"r":123456789012345,"s":1.5e300,"t":[9007199254740993]}'), {
    ok: true,
    value: { p: '1152921504606846975', q: '-9223372036854775808', r: 123456789012345, s: 1.5e300, t: ['9007199254740993'] }
  })
  t.same(parse('{"a":"1152921504606846975 in a string","b\\\\":1234567890123456}'), { ok: true, value: { a: '1152921504606846975 in a string', 'b\\': '1234567890123456' } }, 'strings and escapes skipped')
  t.same(parse('[12345678901234567.5]'), { ok: true, value: [JSON.parse('12345678901234567.5')] }, 'not an integer: a number as JSON.parse reads it')
  t.match(parse('[01234567890123456]'), { ok: false, error: /JSON/ }, 'a leading zero is not JSON, quoted or not')
  t.same(parse('{"ü":"é","n":1234567890123456789}'), { ok: true, value: { ü: 'é', n: '1234567890123456789' } }, 'UTF-8 around a quoted integer')
})

t.test('nesting beyond 64 levels is refused before parsing; brackets in strings do not count', async (t) => {
  t.equal(MAX_JSON_DEPTH, 64)
  t.same(parse(`${'['.repeat(64)}${']'.repeat(64)}`).ok, true)
  t.same(parse(`${'[{"a":'.repeat(32)}1${'}]'.repeat(32)}`).ok, true)
  t.same(parse(`${'['.repeat(65)}${']'.repeat(65)}`), { ok: false, error: 'JSON nested deeper than 64 levels' })
  t.same(parse(`{"a":"${'['.repeat(100)}"}`), { ok: true, value: { a: '['.repeat(100) } })
  t.match(parse('{"a":'), { ok: false, error: /JSON/ })
})
