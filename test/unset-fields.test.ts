import t from 'tap'
import { withoutUnsetFields } from '../src/unset-fields.js'

t.test('drops null properties at any depth and keeps null array items', async (t) => {
  const input = {
    pagination: null,
    list: [null, { next_key: null, total: '2', inner: { key: null, keep: 0 } }, 'x'],
    nested: { a: null, b: false }
  }
  t.same(withoutUnsetFields(input), {
    list: [null, { total: '2', inner: { keep: 0 } }, 'x'],
    nested: { b: false }
  })
  t.same(input.pagination, null, 'the input is not mutated')
  t.same(input.list[1], { next_key: null, total: '2', inner: { key: null, keep: 0 } })
})

t.test('leaves scalars and null itself alone', async (t) => {
  for (const value of [null, 'text', 7, true, undefined]) t.equal(withoutUnsetFields(value), value)
})
