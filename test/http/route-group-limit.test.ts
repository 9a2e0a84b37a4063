import t from 'tap'
import { RouteGroupLimit } from '../../src/http/route-group-limit.js'
import { HttpError } from '../../src/errors.js'

t.test('runs `concurrency` at once, queues up to `queueLimit` in arrival order, refuses the rest with 503', async (t) => {
  const admission = new RouteGroupLimit({ concurrency: 2, queueLimit: 2, busyMessage: 'busy' })
  const first = await admission.enter()
  const second = await admission.enter()
  t.equal(admission.active, 2)
  const order: string[] = []
  const third = admission.enter().then((release) => { order.push('third'); return release })
  const fourth = admission.enter().then((release) => { order.push('fourth'); return release })
  t.equal(admission.queued, 2)
  await t.rejects(admission.enter(), new HttpError(503, 'busy', { 'retry-after': '1' }), 'beyond the queue: refused at once')
  try {
    await admission.enter()
  } catch (err) {
    t.same((err as HttpError).headers, { 'retry-after': '1' })
  }

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
  await t.rejects(admission.enter(), { statusCode: 503, message: 'full' })
  release()
  ;(await admission.enter())()
})
