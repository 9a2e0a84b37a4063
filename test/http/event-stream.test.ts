import t from 'tap'
import { eventsAt } from '../../src/chain/chain-events.js'
import { EventStream, RETRY_MS } from '../../src/http/event-stream.js'

const source = { at: async (height: number) => eventsAt(height, undefined) }
const read = (stream: EventStream): string => String(stream.body.read() ?? '')

t.test('a stream catches up from its cursor in order, once each, and ends with a retry:', async (t) => {
  const stream = new EventStream({ source, from: { height: 10, n: 0 }, now: 0, endsAt: 1000, onEvent: () => {} })
  t.equal(read(stream), `retry: ${RETRY_MS}\n\n`)
  let head = 12
  await Promise.all([stream.catchUp(() => head, () => 5), stream.catchUp(() => head, () => 5)])
  t.equal(read(stream), 'id: 11\nevent: head\ndata: {"height":11}\n\nid: 12\nevent: head\ndata: {"height":12}\n\n', 'the cursor\'s own head not again; one catch-up at a time')
  t.equal(stream.lastWriteAt, 5)
  head = 13
  stream.heartbeat(6)
  stream.end(1500, 7)
  await stream.catchUp(() => head, () => 8)
  t.equal(read(stream), ': heartbeat\n\nretry: 1500\n\n', 'nothing after its end')
  stream.end(2000, 9)
  t.equal(stream.lastWriteAt, 7, 'ended once')
})

t.test('a reset sends the client to refetch, then goes on from the height it names', async (t) => {
  const stream = new EventStream({ source, from: { height: 1, n: 0 }, now: 0, endsAt: 1000, onEvent: () => {} })
  read(stream)
  stream.reset(5000, 1)
  await stream.catchUp(() => 5000, () => 2)
  t.equal(read(stream), 'event: reset\ndata: {"height":5000}\n\nid: 5000\nevent: head\ndata: {"height":5000}\n\n')
})
