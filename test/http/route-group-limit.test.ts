import t from 'tap'
import { OverShareError } from '../../src/errors.js'
import { NO_CLIENT } from '../../src/fair-queue.js'
import { RouteGroupBusyError, RouteGroupLimit } from '../../src/http/route-group-limit.js'

// The limit itself is BoundedLimit's (test/bounded-limit.test.ts); a route group's refusal is its own error.

t.test('a request beyond the group\'s queue is refused with RouteGroupBusyError and the group\'s message (shed, 503)', async (t) => {
  const admission = new RouteGroupLimit({ concurrency: 1, queueLimit: 1, busyMessage: 'verify routes busy' })
  const release = await admission.enter(NO_CLIENT)
  const waiting = admission.enter(NO_CLIENT)
  await t.rejects(admission.enter(NO_CLIENT), new RouteGroupBusyError('verify routes busy'))
  release()
  ;(await waiting)()
  t.equal(admission.active, 0)
})

t.test('a client with more waiting than another, the queue full: its excess is refused with OverShareError (429), the other let in', async (t) => {
  const admission = new RouteGroupLimit({ concurrency: 1, queueLimit: 2, busyMessage: 'verify routes busy' })
  const release = await admission.enter(NO_CLIENT)
  const heavy = [admission.enter('heavy'), admission.enter('heavy')]
  const polite = admission.enter('polite')
  await t.rejects(heavy[1] as Promise<unknown>, OverShareError)
  release()
  ;(await heavy[0] as () => void)()
  ;(await polite)()
})
