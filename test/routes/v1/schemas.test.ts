import t from 'tap'
import { Type } from 'typebox'
import { CHAIN_ERRORS, fitsUint64, Nullable, withChainErrors } from '../../../src/routes/v1/schemas.js'

t.test('fitsUint64 draws the line at 2^64 - 1', async (t) => {
  t.ok(fitsUint64('18446744073709551615'))
  t.ok(fitsUint64('0'))
  t.notOk(fitsUint64('18446744073709551616'))
  t.notOk(fitsUint64('99999999999999999999'))
})

t.test('Nullable marks a schema nullable without a union', async (t) => {
  t.same(Nullable(Type.Array(Type.String())), { type: 'array', items: { type: 'string' }, nullable: true })
})

t.test('withChainErrors documents every status a chain-backed route can answer', async (t) => {
  const ok = Type.Object({ a: Type.String() })
  const responses = withChainErrors(ok)
  t.equal(responses[200], ok)
  t.same(Object.keys(responses).sort(), ['200', ...Object.keys(CHAIN_ERRORS)].sort())
})
