import t from 'tap'
import { eventsAt } from '../../src/chain/chain-events.js'
import { AHEAD_WINDOW, EventStream, HEIGHTS_PER_TURN, MAX_BUFFERED_BYTES, REPLAY_WINDOW, RETRY_MS } from '../../src/waiting/event-stream.js'

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

t.test('a stream opened before any head sends nothing until one is known, then starts at it', async (t) => {
  const stream = new EventStream({ source, from: undefined, now: 0, endsAt: 1000, onEvent: () => {} })
  read(stream)
  await stream.catchUp(() => 0, () => 1)
  t.equal(read(stream), '', 'no head: no event (at 1365d2e: id 0, then every height from 1)')
  t.notOk(stream.placed)
  await stream.catchUp(() => 5000, () => 2)
  t.equal(read(stream), 'id: 5000\nevent: head\ndata: {"height":5000}\n\n')
  t.ok(stream.placed)
})

t.test('a cursor beyond the replay window or far above the head is reset to the head, and told once', async (t) => {
  for (const [cursor, result] of [[5000 - REPLAY_WINDOW - 1, 'reset'], [5000 + AHEAD_WINDOW + 1, 'reset'], [5000 + AHEAD_WINDOW, 'replayed'], [5000 - REPLAY_WINDOW, 'replayed']] as const) {
    const told: string[] = []
    const stream = new EventStream({ source, from: { height: cursor, n: 0 }, now: 0, endsAt: 1000, onEvent: () => {}, onResume: (r) => told.push(r) })
    read(stream)
    await stream.catchUp(() => 0, () => 1)
    await stream.catchUp(() => 5000, () => 1)
    await stream.catchUp(() => 5001, () => 1)
    t.same(told, [result], `cursor ${cursor} at head 5000: ${result}`)
    if (result === 'reset') t.match(read(stream), /^event: reset\ndata: {"height":5000}\n\nid: 5000\n/)
  }
  const quiet = new EventStream({ source, from: { height: 1, n: 0 }, now: 0, endsAt: 1000, onEvent: () => {} })
  await quiet.catchUp(() => 5000, () => 1)
  t.pass('onResume is optional')
})

t.test('a catch-up lets the event loop turn every HEIGHTS_PER_TURN heights', async (t) => {
  const stream = new EventStream({ source, from: { height: 1000, n: Infinity }, now: 0, endsAt: 1000, onEvent: () => {} })
  let turns = 0
  const timer = setInterval(() => { turns++ }, 0)
  await stream.catchUp(() => 1000 + HEIGHTS_PER_TURN * 4, () => 1)
  clearInterval(timer)
  t.ok(turns >= 2, `timers ran during the catch-up (${turns})`)
})

t.test('a stream whose client takes nothing is destroyed once MAX_BUFFERED_BYTES wait', async (t) => {
  const stream = new EventStream({ source, from: undefined, now: 0, endsAt: 1000, onEvent: () => {} })
  let writes = 0
  while (!stream.ended && writes < 100_000) { stream.heartbeat(writes); writes++ }
  t.ok(stream.ended && stream.body.destroyed, `destroyed after ${writes} heartbeats`)
  const bytes = writes * ': heartbeat\n\n'.length
  t.ok(bytes > MAX_BUFFERED_BYTES * 0.9 && bytes < MAX_BUFFERED_BYTES + 100, `at the bound (${bytes} bytes written)`)
  stream.heartbeat(0)
  stream.end(1000, 0)
  t.pass('writes after are nothing')
})
