import t from 'tap'
import { WaitQuota } from '../../src/waiting/wait-quota.js'

t.test('caps per client and per replica; places given back are taken again', async (t) => {
  const quota = new WaitQuota({ perClient: 2, perReplica: 3 })
  t.equal(quota.take('a'), undefined)
  t.equal(quota.take('a'), undefined)
  t.equal(quota.take('a'), 'client')
  t.equal(quota.take('b'), undefined)
  t.equal(quota.take('c'), 'replica')
  t.equal(quota.open, 3)
  quota.give('a')
  quota.give('b')
  t.equal(quota.take('a'), undefined)
  t.equal(quota.take('c'), undefined)
  t.equal(quota.take('d'), 'replica')
  quota.give('a')
  quota.give('a')
  quota.give('c')
  t.equal(quota.open, 0)
  t.equal(quota.take('c'), undefined)
})
