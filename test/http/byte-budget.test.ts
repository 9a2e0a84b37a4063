import t from 'tap'
import { ByteBudget } from '../../src/http/byte-budget.js'

t.test('bytes are held within the limit; what does not fit is refused; a release counts once', async (t) => {
  const budget = new ByteBudget(100)
  const first = budget.take(60)
  t.ok(first)
  t.equal(budget.take(41), undefined, 'beyond the limit')
  const second = budget.take(40)
  t.ok(second, 'exactly the limit')
  first?.()
  first?.()
  t.equal(budget.take(61), undefined, 'a second release gave nothing back')
  t.ok(budget.take(60))
})
