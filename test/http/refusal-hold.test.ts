import t from 'tap'
import type { FastifyReply } from 'fastify'
import { RefusalHold } from '../../src/http/refusal-hold.js'
import { ManualClock } from '../fixtures/manual-clock.js'

function reply (sent: string[], name: string): FastifyReply {
  return { send: () => { sent.push(name) } } as unknown as FastifyReply
}

t.test('a refusal is answered once its hold has passed, in order; beyond the limit at once; all at close', async (t) => {
  const clock = new ManualClock()
  const sent: string[] = []
  const hold = new RefusalHold(1000, 3, clock)
  const body = Buffer.from('{}')
  hold.hold(reply(sent, 'a'), body)
  await clock.advance(400)
  hold.hold(reply(sent, 'b'), body)
  hold.hold(reply(sent, 'c'), body)
  t.equal(hold.size, 3)
  hold.hold(reply(sent, 'd'), body)
  t.same(sent, ['d'], 'beyond the limit: answered at once')
  await clock.advance(599)
  t.same(sent, ['d'], 'held for the whole of its Retry-After')
  await clock.advance(1)
  t.same(sent, ['d', 'a'])
  await clock.advance(400)
  t.same(sent, ['d', 'a', 'b', 'c'])
  t.equal(hold.size, 0)
  hold.hold(reply(sent, 'e'), body)
  hold.releaseAll()
  t.same(sent, ['d', 'a', 'b', 'c', 'e'], 'released on close')
  await clock.advance(2000)
  t.equal(sent.length, 5, 'and never twice')
})
