import t from 'tap'
import { BoundedLimit } from '../src/bounded-limit.js'
import { NO_CLIENT } from '../src/fair-queue.js'

class Busy extends Error {}
const limit = (concurrency: number, queueLimit: number): BoundedLimit => new BoundedLimit({ concurrency, queueLimit, busy: () => new Busy(`busy ${concurrency}+${queueLimit}`) })

t.test('runs `concurrency` at once, queues up to `queueLimit` in arrival order, refuses the rest (shed, 503)', async (t) => {
  const admission = limit(2, 2)
  const first = await admission.enter(NO_CLIENT)
  const second = await admission.enter(NO_CLIENT)
  t.equal(admission.active, 2)
  const order: string[] = []
  const third = admission.enter(NO_CLIENT).then((release) => { order.push('third'); return release })
  const fourth = admission.enter(NO_CLIENT).then((release) => { order.push('fourth'); return release })
  t.equal(admission.queued, 2)
  await t.rejects(admission.enter(NO_CLIENT), new Busy('busy 2+2'), 'beyond the queue: refused at once with the caller\'s error')

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
  const again = await admission.enter(NO_CLIENT)
  t.equal(admission.active, 1, 'and the slots are reusable')
  again()
})

t.test('a queue of 0 refuses as soon as every slot is taken', async (t) => {
  const admission = limit(1, 0)
  const release = await admission.enter(NO_CLIENT)
  await t.rejects(admission.enter(NO_CLIENT), new Busy('busy 1+0'))
  release()
  ;(await admission.enter(NO_CLIENT))()
})

t.test('run() holds a slot while its work runs, and gives it back however the work ends', async (t) => {
  const admission = limit(1, 1)
  let finish!: (value: string) => void
  const first = admission.run(NO_CLIENT, async () => new Promise<string>((resolve) => { finish = resolve }))
  const second = admission.run(NO_CLIENT, async () => { throw new Error('failed') })
  t.equal(admission.active, 1)
  t.equal(admission.queued, 1)
  t.equal(admission.queueLimit, 1)
  await t.rejects(admission.run(NO_CLIENT, async () => 'never'), new Busy('busy 1+1'), 'beyond the queue: refused with the caller\'s error')
  finish('done')
  t.equal(await first, 'done')
  await t.rejects(second, new Error('failed'))
  t.equal(admission.active, 0, 'both slots given back')
  t.equal(await admission.run(NO_CLIENT, async () => 'again'), 'again')
})

t.test('waiters are let in by client in turn (the caller says whose), the heaviest refused first as over its share', async (t) => {
  const busy: boolean[] = []
  const admission = new BoundedLimit({ concurrency: 1, queueLimit: 3, busy: (overShare) => { busy.push(overShare); return new Busy(overShare ? 'over share' : 'full') } })
  const first = await admission.enter(NO_CLIENT)
  const order: string[] = []
  const enter = async (client: string, name: string): Promise<void> => {
    const release = await admission.enter(client)
    order.push(name)
    release()
  }
  const heavy = [enter('heavy', 'h1'), enter('heavy', 'h2'), enter('heavy', 'h3')]
  const polite = enter('polite', 'p1')
  await t.rejects(heavy[2] as Promise<void>, new Busy('over share'), 'the heavy client\'s newest made room, refused as its excess')
  first()
  await Promise.all([heavy[0], heavy[1], polite])
  t.same(order, ['h1', 'p1', 'h2'], 'the polite client went second, not last')
  t.same(busy, [true])
})
