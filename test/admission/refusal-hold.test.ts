import t from 'tap'
import type { FastifyReply } from 'fastify'
import { HOLD_LIMIT, RefusalHold, RELEASE_BATCH, RELEASE_PER_S } from '../../src/admission/refusal-hold.js'
import { ManualClock } from '../fixtures/manual-clock.js'

function reply (sent: string[], name: string): FastifyReply {
  return { send: () => { sent.push(name) } } as unknown as FastifyReply
}

t.test('a refusal is answered once its hold has passed, in order; beyond the limit at once; all at close', async (t) => {
  const clock = new ManualClock()
  const sent: string[] = []
  const hold = new RefusalHold(1000, 3, clock, () => 0)
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

t.test('refusals made together come back spread over a second Retry-After, each held at least one, in due order', async (t) => {
  const clock = new ManualClock()
  const sent: string[] = []
  // Drawn in turn: a is held 1.9 s, b 1.2 s, c 1.5 s, d 1.0 s.
  const draws = [0.9, 0.2, 0.5, 0]
  const hold = new RefusalHold(1000, 10, clock, () => draws.shift() as number)
  const body = Buffer.from('{}')
  for (const name of ['a', 'b', 'c', 'd']) hold.hold(reply(sent, name), body)
  await clock.advance(999)
  t.same(sent, [], 'none before its Retry-After')
  await clock.advance(1)
  t.same(sent, ['d'], 'the one drawn shortest first, though it came last')
  await clock.advance(200)
  t.same(sent, ['d', 'b'])
  await clock.advance(300)
  t.same(sent, ['d', 'b', 'c'])
  await clock.advance(399)
  t.same(sent, ['d', 'b', 'c'], 'the longest held for its whole draw')
  await clock.advance(1)
  t.same(sent, ['d', 'b', 'c', 'a'])
})

t.test('by default the holds are spread: a thousand refusals made at once are not answered in one instant', async (t) => {
  const clock = new ManualClock()
  const sent: string[] = []
  const hold = new RefusalHold(1000, 2000, clock)
  for (let i = 0; i < 1000; i++) hold.hold(reply(sent, String(i)), Buffer.from('{}'))
  await clock.advance(1000)
  const first = sent.length
  await clock.advance(500)
  const half = sent.length
  // Two Retry-Afters, and the timer's last millisecond.
  await clock.advance(501)
  t.ok(first < 50, `at most a few at the first instant (${first})`)
  t.ok(half > 300 && half < 700, `about half within the first half second after it (${half})`)
  t.equal(sent.length, 1000, 'all within two Retry-Afters')
})

t.test(`refusals due together are sent ${RELEASE_BATCH} at once at most, the rest at ${RELEASE_PER_S} a second: the I/O waiting between them goes first`, async (t) => {
  const clock = new ManualClock()
  const sent: string[] = []
  const hold = new RefusalHold(1000, 1000, clock, () => 0)
  for (let i = 0; i < 200; i++) hold.hold(reply(sent, String(i)), Buffer.from('{}'))
  await clock.advance(1000)
  t.equal(sent.length, RELEASE_BATCH, 'one batch when they fall due')
  await clock.advance(1000 / RELEASE_PER_S)
  t.equal(sent.length, RELEASE_BATCH + 1, 'then one each 1/RELEASE_PER_S s')
  await clock.advance(((200 - RELEASE_BATCH - 1) * 1000) / RELEASE_PER_S)
  t.equal(sent.length, 200)
  t.same(sent.slice(0, 3), ['0', '1', '2'], 'in due order')
})

t.test(`thousands held at once come back at ${RELEASE_PER_S} a second at most, after their Retry-After: a scraper's connections cost no more, however many`, async (t) => {
  const clock = new ManualClock()
  const sent: string[] = []
  const hold = new RefusalHold(1000, HOLD_LIMIT, clock)
  for (let i = 0; i < 4000; i++) hold.hold(reply(sent, String(i)), Buffer.from('{}'))
  const perSecond: number[] = []
  for (let second = 0; second < 6; second++) {
    const before = sent.length
    for (let ms = 0; ms < 1000; ms += 10) await clock.advance(10)
    perSecond.push(sent.length - before)
  }
  t.equal(perSecond[0], 0, 'none before its Retry-After')
  t.equal(sent.length, 4000, 'all within the Retry-After and the spread of 4,000 at the rate')
  t.ok(perSecond.every((n) => n <= 1.5 * RELEASE_PER_S), `per second: ${perSecond.join(', ')}`)
})
