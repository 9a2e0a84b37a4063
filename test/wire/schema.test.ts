import t from 'tap'
import { Type } from 'typebox'
import { exactInteger, Int32, Int64, int64, Nullable, readInt64, Uint64 } from '../../src/wire/schema.js'

t.test('int64() reads one protojson integer exactly, 0 when absent or unreadable', async (t) => {
  t.equal(int64('9223372036854775807'), 9223372036854775807n)
  t.equal(int64('-9223372036854775808'), -9223372036854775808n)
  t.equal(int64('12'), 12)
  t.equal(int64(12), 12)
  t.equal(int64(undefined), 0)
  t.equal(int64('12abc'), 0)
  t.equal(readInt64('12abc'), undefined, 'readInt64 says it could not')
  t.equal(readInt64(true), undefined)
})

t.test('an integer is a number while it is safe, a bigint beyond 2^53', async (t) => {
  t.equal(exactInteger(9007199254740991n), 9007199254740991)
  t.equal(exactInteger(9007199254740992n), 9007199254740992n)
  t.equal(exactInteger(-9007199254740992n), -9007199254740992n)
})

t.test('schemas document themselves for OpenAPI; Nullable without a union', async (t) => {
  t.match(Int64(), { type: 'integer', format: 'int64' })
  t.match(Uint64({ description: 'a height' }), { type: 'integer', format: 'uint64', minimum: 0, description: 'a height' })
  t.match(Int32(), { type: 'integer', format: 'int32' })
  t.same(Nullable(Type.Array(Type.String())), { type: 'array', items: { type: 'string' }, nullable: true })
})
