import t from 'tap'
import { goIntegerError, goQuote, invalidParameter, missingQueryParameter, parseGoInteger } from '../../src/http/param-errors.js'

t.test('the Go binder\'s envelope and its missing-query message', async (t) => {
  t.equal(invalidParameter('id', 'why'), 'Invalid format for parameter id: why')
  t.equal(missingQueryParameter('chain'), 'Invalid format for parameter chain: query parameter \'chain\' is required')
})

t.test('strconv.ParseUint and ParseInt failures in Go\'s words', async (t) => {
  t.equal(goIntegerError('id', 'abc', 'uint64'), 'Invalid format for parameter id: error binding string parameter: strconv.ParseUint: parsing "abc": invalid syntax')
  t.equal(goIntegerError('id', '-1', 'uint64'), 'Invalid format for parameter id: error binding string parameter: strconv.ParseUint: parsing "-1": invalid syntax')
  t.equal(goIntegerError('id', '18446744073709551616', 'uint64'), 'Invalid format for parameter id: error binding string parameter: strconv.ParseUint: parsing "18446744073709551616": value out of range')
  t.equal(goIntegerError('epoch', '+9223372036854775808', 'int64'), 'Invalid format for parameter epoch: error binding string parameter: strconv.ParseInt: parsing "+9223372036854775808": value out of range')
  t.equal(goIntegerError('epoch', '1-', 'int64'), 'Invalid format for parameter epoch: error binding string parameter: strconv.ParseInt: parsing "1-": invalid syntax')
})

t.test('parseGoInteger accepts what strconv accepts', async (t) => {
  t.equal(parseGoInteger('007', 'uint64'), 7n)
  t.equal(parseGoInteger('18446744073709551615', 'uint64'), 18446744073709551615n)
  t.equal(parseGoInteger('18446744073709551616', 'uint64'), undefined)
  t.equal(parseGoInteger('+5', 'uint64'), undefined)
  t.equal(parseGoInteger('+5', 'int64'), 5n)
  t.equal(parseGoInteger('-9223372036854775808', 'int64'), -9223372036854775808n)
  t.equal(parseGoInteger('-9223372036854775809', 'int64'), undefined)
  t.equal(parseGoInteger('', 'int64'), undefined)
})

t.test('goQuote writes a Go string literal like strconv.Quote', async (t) => {
  t.equal(goQuote('plain /../ text'), '"plain /../ text"')
  t.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"')
  t.equal(goQuote('\n\t\r\x07\b\f\v'), '"\\n\\t\\r\\a\\b\\f\\v"')
  t.equal(goQuote('\x00\x1f\x7f'), '"\\x00\\x1f\\x7f"')
  t.equal(goQuote('\u0085é✓'), '"\\u0085é✓"', 'C1 controls escaped, printable Unicode kept')
})
