import t from 'tap'
import { RouteGroupBusyError, RouteGroupLimit } from '../../src/http/route-group-limit.js'

t.test('runs `concurrency` at once, queues up to `queueLimit` in arrival order, refuses the rest (shed, 503)', async (t) => {
  const admission = new RouteGroupLimit({ concurrency: 2, queueLimit: 2, busyMessage: 'busy' })
  const first = await admission.enter()
  const second = await admission.enter()
  t.equal(admission.active, 2)
  const order: string[] = []
  const third = admission.enter().then((release) => { order.push('third'); return release })
  const fourth = admission.enter().then((release) => { order.push('fourth'); return release })
  t.equal(admission.queued, 2)
  await t.rejects(admission.enter(), new RouteGroupBusyError('busy'), 'beyond the queue: refused at once (app.ts answers 503 + Retry-After)')

  first()
  first() // a second call gives nothing back twice
  const releaseThird = await third
  t.same(order, ['third'])
  t.equal(admission.active, 2, 'the slot passed straight on')
  t.equal(admission.queued, 1)
  second()
  const releaseFourth = await fourth
  t.same(order, ['third', 'fourth'])
  releaseThird()
  releaseFourth()
  t.equal(admission.active, 0)
  t.equal(admission.queued, 0)
  const again = await admission.enter()
  t.equal(admission.active, 1, 'and the slots are reusable')
  again()
})

t.test('a queue of 0 refuses as soon as every slot is taken', async (t) => {
  const admission = new RouteGroupLimit({ concurrency: 1, queueLimit: 0, busyMessage: 'full' })
  const release = await admission.enter()
  await t.rejects(admission.enter(), new RouteGroupBusyError('full'))
  release()
  ;(await admission.enter())()
})
