import t from 'tap'
import { eventsAt, type ChainEvent } from '../../src/chain/chain-events.js'
import { DRAIN_SPREAD_MS, END_FLUSH_MS, EventStreams, FIRST_HEAD_WAIT_MS, HEARTBEAT_MS, MAX_AGE_MS, TICK_MS } from '../../src/waiting/event-streams.js'
import type { EventStream } from '../../src/waiting/event-stream.js'
import { HeadFollower } from '../../src/waiting/head-follower.js'
import { WaitQuota } from '../../src/waiting/wait-quota.js'
import { ManualClock } from '../fixtures/manual-clock.js'

function setup (source = { at: async (height: number) => eventsAt(height, undefined) }) {
  const clock = new ManualClock()
  const listeners: Array<(height: number) => void> = []
  const heads = { onHead: (listener: (height: number) => void) => { listeners.push(listener); return () => { listeners.length = 0 } } }
  // Its own clock: its polls would outnumber what the streams' clock steps through.
  const follower = new HeadFollower({ poll: async () => {}, onHead: () => () => {} }, new ManualClock())
  const counts = { opened: 0, closed: 0, sent: [] as ChainEvent[], replayed: 0, reset: 0 }
  const observer = { opened: () => counts.opened++, closed: () => counts.closed++, sent: (e: ChainEvent) => counts.sent.push(e), replayed: () => counts.replayed++, reset: () => counts.reset++ }
  const streams = new EventStreams({ heads, follower, clock, source, observer, quota: new WaitQuota({ perClient: 2, perReplica: 3 }), random: () => 0.5 })
  return { clock, streams, counts, rise: (h: number) => listeners.forEach((l) => l(h)) }
}
async function settled (): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve))
}
const text = (body: NodeJS.ReadableStream): string => String(body.read() ?? '')

t.test('streams follow the heads, replay from cursors, reset beyond the window, and are capped', async (t) => {
  const { streams, counts, rise } = setup()
  const live = streams.open('a', undefined, 5100) as EventStream
  const resumed = streams.open('a', { height: 5098, n: 0 }, 5100) as EventStream
  t.equal(streams.open('a', undefined, 5100), 'client')
  const far = streams.open('b', { height: 1, n: 0 }, 5100) as EventStream
  t.equal(streams.open('c', undefined, 5100), 'replica')
  await settled()
  t.match(text(live.body), /id: 5100\n/)
  t.match(text(resumed.body), /id: 5099\n[^]*id: 5100\n/)
  t.match(text(far.body), /event: reset\ndata: {"height":5100}[^]*id: 5100\n/)
  t.same([counts.opened, counts.replayed, counts.reset], [3, 1, 1])
  rise(5101)
  rise(5100)
  await settled()
  t.equal(text(live.body), 'id: 5101\nevent: head\ndata: {"height":5101}\n\n', 'a lower head changes nothing')
  streams.close(far)
  streams.close(far)
  t.equal(counts.closed, 1)
  t.not(streams.open('c', undefined, 5100), 'replica', 'its place given back')
})

t.test('heartbeats after HEARTBEAT_MS of silence; a stream ends at its age', async (t) => {
  const { clock, streams } = setup()
  const stream = streams.open('a', undefined, 100) as EventStream
  await settled()
  text(stream.body)
  await clock.advance(HEARTBEAT_MS + TICK_MS)
  t.equal(text(stream.body), ': heartbeat\n\n')
  await clock.advance(MAX_AGE_MS * 1.0 + TICK_MS)
  t.match(text(stream.body), /retry: 1000\n\n$/, 'ended at 10 min (± 10%) with a short retry')
  streams.close(stream)
  t.equal(clock.pending, 0, 'no timer once none is open')
})

t.test('the drain ends every stream within its spread with a random retry; one opened then ends at once', async (t) => {
  const { clock, streams } = setup()
  const stream = streams.open('a', undefined, 100) as EventStream
  await settled()
  text(stream.body)
  streams.drain()
  await clock.advance(DRAIN_SPREAD_MS / 2)
  t.equal(text(stream.body), 'retry: 3000\n\n', 'at 0.5 of the spread, retry 1 s + 0.5 × 4 s')
  const late = streams.open('b', undefined, 100) as EventStream
  await settled()
  t.match(text(late.body), /retry: 3000\n\n$/)
  streams.stop()
})

t.test('a stream whose events cannot be had is closed', async (t) => {
  const { streams, counts } = setup({ at: async () => { throw new Error('no') } })
  streams.open('a', undefined, 100)
  await settled()
  t.equal(counts.closed, 1)
})

t.test('a stream opened before any head waits for one, at most FIRST_HEAD_WAIT_MS, then ends with its retry:', async (t) => {
  const { streams, rise } = setup()
  const waiting = streams.open('a', undefined, 0) as EventStream
  const late = streams.open('b', undefined, 0) as EventStream
  await settled()
  t.equal(text(waiting.body), 'retry: 3000\n\n', 'nothing sent without a head')
  text(late.body)
  rise(7000)
  await settled()
  t.equal(text(waiting.body), 'id: 7000\nevent: head\ndata: {"height":7000}\n\n', 'the first head known is where it starts')
  streams.close(waiting)
  streams.close(late)
  const unplaced = setup()
  const alone = unplaced.streams.open('a', undefined, 0) as EventStream
  await unplaced.clock.advance(FIRST_HEAD_WAIT_MS + TICK_MS)
  t.match(text(alone.body), /retry: 3000\n\n$/, 'no head within the wait: ended, its client to come back')
  t.ok(alone.ended)
  await unplaced.clock.advance(END_FLUSH_MS)
  t.ok(alone.body.destroyed, 'not taken by its client: destroyed')
  unplaced.streams.close(alone)
})

t.test('an ended stream its client does not take is destroyed END_FLUSH_MS later; one that closed is left alone', async (t) => {
  const { clock, streams } = setup()
  const stuck = streams.open('a', undefined, 100) as EventStream
  const gone = streams.open('b', undefined, 100) as EventStream
  await settled()
  streams.drain()
  await clock.advance(DRAIN_SPREAD_MS)
  t.ok(stuck.ended && gone.ended)
  streams.close(gone)
  let goneDestroyed = false
  gone.destroy = () => { goneDestroyed = true }
  await clock.advance(END_FLUSH_MS)
  t.ok(stuck.body.destroyed, 'the drain never waits on a client that does not read')
  t.notOk(goneDestroyed, 'a stream already closed is not touched')
  streams.close(stuck)
  streams.stop()
})
