import t from 'tap'
import { BURST, Hedging, MIN_SAMPLES, SAMPLES } from '../../src/chain/hedging.js'
import { ManualClock } from '../fixtures/manual-clock.js'

const hedging = (clock = new ManualClock(), options: Partial<ConstructorParameters<typeof Hedging>[0]> = {}): Hedging =>
  new Hedging({ budget: 0.1, minDelayMs: 50, maxDelayMs: 1000, nodeCount: 2, clock, ...options })

t.test('a node\'s delay: the ceiling until its latency is known, then its p95 within the floor and the ceiling', async (t) => {
  const h = hedging()
  t.equal(h.delayMs(0), 1000, 'nothing known: wait as long as the ceiling')
  for (let i = 1; i < MIN_SAMPLES; i++) h.answered(0, 100)
  t.equal(h.delayMs(0), 1000, `still unknown below ${MIN_SAMPLES} answers`)
  h.answered(0, 100)
  t.equal(h.delayMs(0), 100, 'known: its p95')
  t.equal(h.delayMs(1), 1000, 'each node has its own')

  // 95 answers in 5 ms, 5 in 2 s: the p95 is the slowest of the fast ones.
  const p = hedging()
  for (let i = 0; i < 100; i++) p.answered(0, i % 20 === 19 ? 2000 : 5 + (i % 20) / 10)
  for (let i = 0; i < 12; i++) p.answered(0, 5)
  t.equal(p.delayMs(0), 50, 'a fast node\'s p95 is below the floor: the floor')
  for (let i = 0; i < SAMPLES; i++) p.answered(0, i < SAMPLES * 0.9 ? 80 : 300)
  t.equal(p.delayMs(0), 300, 'its p95 once its last answers slowed down')
  for (let i = 0; i < SAMPLES; i++) p.answered(0, 5000)
  t.equal(p.delayMs(0), 1000, 'never beyond the ceiling')
  for (let i = 0; i < SAMPLES; i++) p.answered(0, 70)
  t.equal(p.delayMs(0), 70, 'only the last answers count: a node that recovered is hedged early again')
})

t.test('the quantile a read waits for can be another than the p95 (a hedge waits for the other nodes\' tails)', async (t) => {
  const at = (quantile?: number): number => {
    const h = hedging(new ManualClock(), { minDelayMs: 1, ...(quantile === undefined ? {} : { quantile }) })
    for (let i = 1; i <= SAMPLES; i++) h.answered(0, i)
    return h.delayMs(0)
  }
  // SAMPLES (128) answers of 1, 2, … 128 ms.
  t.equal(at(), Math.ceil(0.95 * SAMPLES), 'by default their p95')
  t.equal(at(0.9), Math.ceil(0.9 * SAMPLES), 'their p90 with quantile 0.9')
})

t.test('a node\'s slowest answers are the ones a hedge overtakes: they count, so its delay stays at its p95', async (t) => {
  // A steady node (answers spread evenly over 5–15 ms) and a 1 ms floor, read after read:
  // a read not answered by the node's delay is hedged, the other node (as steady) answers 5 ms
  // later and the first attempt is aborted.
  const simulate = (overtakenCount: boolean): number => {
    const h = hedging(new ManualClock(), { minDelayMs: 1, maxDelayMs: 1000 })
    let hedged = 0
    for (let i = 0; i < 4000; i++) {
      const latency = 5 + ((i * 7919) % 100) / 10
      const delay = h.delayMs(0)
      if (latency <= delay) {
        h.answered(0, latency)
        continue
      }
      if (i >= 1000) hedged++
      h.answered(1, 5 + ((i * 104_729) % 100) / 10)
      if (overtakenCount) h.overtaken(0, delay + 5)
    }
    return hedged / 3000
  }
  const share = simulate(true)
  t.ok(share > 0.02 && share < 0.08, `about 1 read in 20 hedged (${share})`)
  t.ok(simulate(false) > 0.5, 'were the overtaken attempts left out, the delay would sink to the floor and most reads be hedged')

  const h = hedging()
  for (let i = 0; i < MIN_SAMPLES; i++) h.answered(0, 100)
  for (let i = 0; i < SAMPLES; i++) h.overtaken(0, 60)
  t.equal(h.delayMs(0), 100, 'a wait shorter than the node\'s quantile says nothing: not counted')
  for (let i = 0; i < SAMPLES; i++) h.overtaken(0, 400)
  t.equal(h.delayMs(0), 400, 'waits beyond it count as answers at that time')
})

t.test('a node slow on some answers is hedged when late by the other node\'s p95, not by its own', async (t) => {
  // Both nodes answer in 50–69 ms; node 0 also takes 2 s on every 16th answer. Its own p95
  // falls among those (bench 13's slow node: 1 in 20, with the waits hedges overtook).
  const ordinary = (i: number): number => 50 + (i % 20)
  const h = hedging(new ManualClock(), { minDelayMs: 1, maxDelayMs: 10_000 })
  for (let i = 0; i < SAMPLES; i++) {
    h.answered(0, i % 16 === 15 ? 2000 : ordinary(i))
    h.answered(1, ordinary(i))
  }
  t.equal(h.delayMs(1), 68, 'the steady node: its own p95')
  t.equal(h.delayMs(0), 69, 'the slow one: its ordinary tail (its own p90, above what the steady node says), not one of its slow answers')
  const alone = hedging(new ManualClock(), { minDelayMs: 1, maxDelayMs: 10_000 })
  for (let i = 0; i < SAMPLES; i++) alone.answered(0, i % 16 === 15 ? 2000 : ordinary(i))
  t.equal(alone.delayMs(0), 2000, 'with no other node known, its own p95: one of its slow answers')
})

t.test('a node merely slower than another keeps its own p95: the other\'s tail is moved to its median', async (t) => {
  const delays = (slower: (ms: number) => number): number[] => {
    const h = hedging(new ManualClock(), { minDelayMs: 1, maxDelayMs: 10_000 })
    for (let i = 0; i < SAMPLES; i++) {
      h.answered(0, 50 + (i % 20))
      h.answered(1, slower(50 + (i % 20)))
    }
    return [h.delayMs(0), h.delayMs(1)]
  }
  // 50–69 ms: median 59, p95 68.
  t.same(delays((ms) => ms + 300), [68, 368], 'farther away by 300 ms: each keeps its own p95 (the tail shifted)')
  t.same(delays((ms) => ms * 4), [68, 272], '4 times slower at everything: each keeps its own p95 (the tail scaled)')
  t.same(delays((ms) => ms), [68, 68], 'alike: alike')
})

t.test('however narrow the other node\'s tail, a node\'s delay stays at or above its own p90', async (t) => {
  const h = hedging(new ManualClock(), { minDelayMs: 1, maxDelayMs: 10_000 })
  for (let i = 0; i < SAMPLES; i++) {
    // Node 0 spread over 50–69 ms (p90 67); node 1 always 60 ms, its p95 its median.
    h.answered(0, 50 + (i % 20))
    h.answered(1, 60)
  }
  t.equal(h.delayMs(0), 67, 'its p90, not its median (which node 1\'s tail would say): at most 1 read in 10 hedged')
  t.equal(h.delayMs(1), 60)
})

t.test('answers timed at 0 ms (a clock that did not move) predict a number, never NaN', async (t) => {
  const h = hedging(new ManualClock(), { minDelayMs: 1 })
  for (let i = 0; i < SAMPLES; i++) {
    h.answered(0, 0)
    h.answered(1, 50 + (i % 20))
  }
  t.equal(h.delayMs(1), 67, 'the other node\'s tail, shifted: no lower than its own p90')
  t.equal(h.delayMs(0), 1, 'the floor')
})

t.test('a ceiling below the floor is the floor', async (t) => {
  t.equal(hedging(new ManualClock(), { minDelayMs: 200, maxDelayMs: 100 }).delayMs(0), 200)
})

t.test('the budget: at most its share of the window\'s reads (plus a small burst), over a sliding window', async (t) => {
  const clock = new ManualClock(0)
  const h = hedging(clock, { windowMs: 10_000 })
  for (let i = 0; i < 100; i++) h.read()
  let sent = 0
  for (let i = 0; i < 50; i++) if (h.admit(false) === undefined) sent++
  t.equal(sent, 10 + BURST, '10% of 100 reads, and the burst')
  t.equal(h.admit(false), 'budget')

  // Half the window later: the reads and hedges are still in it.
  await clock.advance(5000)
  for (let i = 0; i < 100; i++) h.read()
  sent = 0
  for (let i = 0; i < 50; i++) if (h.admit(false) === undefined) sent++
  t.equal(sent, 10, '200 reads in the window, 23 hedges allowed, 13 already sent')

  // The first 100 reads and 13 hedges fall out of the window after 10 s.
  await clock.advance(5000)
  t.equal(h.admit(false), undefined, 'the first second\'s hedges left the window')
  sent = 1
  for (let i = 0; i < 50; i++) if (h.admit(false) === undefined) sent++
  t.equal(sent, 13 - 10, '100 reads left: 13 allowed, 10 of them sent 5 s ago')

  // Long idle: everything left the window; the burst alone remains.
  await clock.advance(60_000)
  sent = 0
  for (let i = 0; i < 10; i++) if (h.admit(false) === undefined) sent++
  t.equal(sent, BURST, 'no reads: only the burst')
})

t.test('no hedge while the replica is overloaded, and none counted against the budget', async (t) => {
  const h = hedging()
  for (let i = 0; i < 100; i++) h.read()
  t.equal(h.admit(true), 'overload')
  let sent = 0
  for (let i = 0; i < 50; i++) if (h.admit(false) === undefined) sent++
  t.equal(sent, 10 + BURST)
})

t.test('by default on the real clock, over a 10 s window', async (t) => {
  const h = new Hedging({ budget: 0.5, minDelayMs: 50, maxDelayMs: 1000, nodeCount: 1 })
  for (let i = 0; i < 4; i++) h.read()
  let sent = 0
  for (let i = 0; i < 10; i++) if (h.admit(false) === undefined) sent++
  t.equal(sent, 2 + BURST)
})
