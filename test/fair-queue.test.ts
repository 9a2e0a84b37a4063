import { getHeapSpaceStatistics } from 'node:v8'
import t from 'tap'
import { FairQueue, type Refusal } from '../src/fair-queue.js'

function queue (limit: number) {
  const refused: Array<[string, Refusal]> = []
  const line = new FairQueue<string>(limit)
  const push = (client: string, item: string): boolean => line.push(client, item, (refusal) => refused.push([item, refusal]))
  const drain = (): string[] => {
    const out: string[] = []
    for (let item = line.shift(); item !== undefined; item = line.shift()) out.push(item)
    return out
  }
  return { line, refused, push, drain }
}

t.test('serves clients in turn, not in arrival order: one waiter is next after one turn of each other client', async (t) => {
  const { line, push, drain } = queue(100)
  for (let i = 1; i <= 5; i++) push('heavy', `h${i}`)
  push('polite', 'p1')
  push('other', 'o1')
  t.equal(line.size, 7)
  t.equal(line.clients, 3)
  t.same(drain(), ['h1', 'p1', 'o1', 'h2', 'h3', 'h4', 'h5'], 'arrival order would put p1 sixth')
  t.equal(line.size, 0)
  t.equal(line.clients, 0, 'no state left for clients with nothing waiting')
  t.equal(line.shift(), undefined)
})

t.test('full: the heaviest client loses its newest waiter to a lighter one, as its excess', async (t) => {
  const { push, refused, drain } = queue(4)
  for (let i = 1; i <= 4; i++) t.ok(push('heavy', `h${i}`))
  t.ok(push('polite', 'p1'), 'the polite client gets in')
  t.same(refused, [['h4', { overShare: true }]], 'the heavy client\'s newest is refused, over its share')
  t.ok(push('polite2', 'q1'))
  t.notOk(push('heavy', 'h5'), 'the heaviest newcomer is refused itself')
  t.same(refused.at(-1), ['h5', { overShare: true }])
  t.same(drain(), ['h1', 'p1', 'q1', 'h2'])
})

t.test('full with one client, or with every client at one: the replica\'s own limit, not anyone\'s excess', async (t) => {
  const lone = queue(2)
  lone.push('a', 'a1')
  lone.push('a', 'a2')
  t.notOk(lone.push('a', 'a3'))
  t.same(lone.refused, [['a3', { overShare: false }]], 'a lone client is never over its share (work-conserving)')
  const even = queue(2)
  even.push('a', 'a1')
  even.push('b', 'b1')
  t.notOk(even.push('c', 'c1'))
  t.same(even.refused, [['c1', { overShare: false }]])
  const none = queue(0)
  t.notOk(none.push('a', 'a1'), 'a line of 0 refuses everyone')
  t.same(none.refused, [['a1', { overShare: false }]])
})

t.test('a million distinct clients never hold more state than the line\'s limit', async (t) => {
  const { line, push } = queue(8)
  for (let i = 0; i < 1_000_000; i++) {
    push(`2001:db8:${i.toString(16)}::/64`, 'x')
    if (i % 2 === 0) line.shift()
  }
  t.ok(line.size <= 8, `${line.size} waiting`)
  t.ok(line.clients <= 8, `${line.clients} clients held: bounded by the limit, not by the clients seen`)
})

t.test('a lone client\'s long line stays in order through shifts, new waiters and evictions', async (t) => {
  const { line, push, refused } = queue(1000)
  const served: string[] = []
  let next = 0
  // Pushes and shifts interleaved, so the line is compacted many times while it holds waiters.
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i < 30; i++) push('heavy', `h${next++}`)
    for (let i = 0; i < 20; i++) served.push(line.shift() as string)
  }
  t.same(served, Array.from({ length: 1000 }, (_, i) => `h${i}`), 'oldest first')
  t.equal(line.size, 500)
  // Full: a newcomer evicts the heavy client's newest waiter, never one from its front.
  for (let i = 0; i < 500; i++) push('heavy', `h${next++}`)
  t.ok(push('polite', 'p1'))
  t.same(refused, [['h1999', { overShare: true }]])
  t.equal(line.shift(), 'h1000')
  t.equal(line.shift(), 'p1')
  t.equal(line.shift(), 'h1001')
  t.equal(line.size, 997)
})

t.test('a line that never empties holds its waiters, not every waiter it has had', async (t) => {
  const { line, push } = queue(1000)
  // An array that outgrows ~128 KiB lives in V8's large object space: a FIFO that kept the
  // slots of its served waiters would be one, 8 bytes a waiter served (8 MB here).
  const largeObjects = (): number => getHeapSpaceStatistics().find((space) => space.space_name === 'large_object_space')?.space_used_size ?? 0
  const before = largeObjects()
  for (let i = 0; i < 500; i++) push('heavy', `h${i}`)
  for (let i = 500; i < 1_000_500; i++) {
    push('heavy', `h${i}`)
    line.shift()
  }
  t.equal(line.size, 500)
  const grown = largeObjects() - before
  t.ok(grown < 1_000_000, `large objects grew by ${grown} bytes over a million waiters served`)
})
