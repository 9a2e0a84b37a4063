// A model of benchmark 13 (hedged chain reads) run on the real policy, src/chain/hedging.ts:
// each node's delay and the budget decide, on a simulated clock, with latencies drawn from a
// distribution fitted to this machine. It is not a measurement of edge-api; it answers
// "what would bench 13 show with another quantile, floor or rule" in seconds, without the
// noise of a shared host, and it reproduces bench 13's measured figures (docs/hedged-reads.md).
//   npx tsx bench/hedging-model.ts
// The model:
// - reads arrive every 10 ms (bench 13's 100 req/s), 6100 a run (61 s), the first 100 discarded;
// - a read goes to the node with fewer reads in flight, node 1 on a tie; with `demote` (as
//   src/chain/nodes.ts does since 2026-12-02), a node a hedge overtook in the last 10 s after
//   the other;
// - an attempt takes 5.2 + 0.4·e^(σ·z) ms, z standard normal: with σ = 0.9 the client p99
//   with no slow node is ~10 ms, as bench 13 measures on the quiet machine (σ = 1.3: a
//   loaded one); node 1 adds 2000 ms to every 20th of its answers (bench 13's slow node), or
//   nothing (no slow node), or 10 ms to every answer (a node farther away: what the delay's
//   rule must not turn into hedges);
// - a read still unanswered after the node's delay is hedged to the other node if the budget
//   allows (Hedging.admit); the first answer wins, the other attempt counts as overtaken;
// - the client's latency adds edge-api's own 1.2 + 0.3·e^(0.8·z) ms.
// Each row is the median over 7 seeds of a run's client p99 and share of reads hedged.
import { Hedging } from '../src/chain/hedging.js'
import type { Clock } from '../src/clock.js'
import { OVERTAKEN_DEMOTES_MS } from '../src/chain/nodes.js'

interface Model {
  readonly quantile: number
  readonly floorMs: number
  /** Whether an overtaken attempt's wait counts (Hedging.overtaken), as the client does. */
  readonly overtakenCounts: boolean
  /** Node 1 as bench 13 makes it (slow by 2 s on every 20th answer), like node 2, or farther away (10 ms more on every answer). */
  readonly node1: 'slow' | 'steady' | 'farther'
  readonly sigma: number
  /** Whether a node a hedge overtook is tried after the other for OVERTAKEN_DEMOTES_MS. */
  readonly demote: boolean
  readonly seed: number
}

const READS = 6100
const WARM_UP = 100
const INTERVAL_MS = 10
const SLOW_MS = 2000
const SLOW_EVERY = 20
const FARTHER_MS = 10

function random (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

/** A deterministic event loop: events and the policy's timers, in time order. */
class SimulatedTime implements Clock {
  #now = 0
  readonly #events: Array<{ at: number, fn: () => void, live: boolean }> = []

  now (): number {
    return this.#now
  }

  after (ms: number, fn: () => void): () => void {
    const event = { at: this.#now + ms, fn, live: true }
    this.#events.push(event)
    return () => { event.live = false }
  }

  run (): void {
    for (;;) {
      let next = -1
      for (let i = 0; i < this.#events.length; i++) {
        const e = this.#events[i] as { at: number, live: boolean }
        if (e.live && (next === -1 || e.at < (this.#events[next] as { at: number }).at)) next = i
      }
      if (next === -1) return
      const event = this.#events.splice(next, 1)[0] as { at: number, fn: () => void }
      this.#now = event.at
      event.fn()
      if (this.#events.length > 256) for (let i = this.#events.length - 1; i >= 0; i--) if (!(this.#events[i] as { live: boolean }).live) this.#events.splice(i, 1)
    }
  }
}

function simulate (model: Model): { p99: number, hedged: number } {
  const rand = random(model.seed)
  const normal = (): number => Math.sqrt(-2 * Math.log(Math.max(1e-12, rand()))) * Math.cos(2 * Math.PI * rand())
  const time = new SimulatedTime()
  const hedging = new Hedging({ budget: 0.1, minDelayMs: model.floorMs, maxDelayMs: 1000, nodeCount: 2, quantile: model.quantile, clock: time })
  const inFlight = [0, 0]
  const demotedUntil = [-Infinity, -Infinity]
  let node1Answers = 0
  let hedges = 0
  const latencies: number[] = []
  const attempt = (node: number): number => {
    inFlight[node] = (inFlight[node] as number) + 1
    let ms = 5.2 + 0.4 * Math.exp(model.sigma * normal())
    if (node === 0 && model.node1 === 'farther') ms += FARTHER_MS
    if (node === 0 && model.node1 === 'slow' && ++node1Answers % SLOW_EVERY === 0) ms += SLOW_MS
    return ms
  }
  const read = (index: number): void => {
    const arrived = time.now()
    hedging.read()
    // As ChainNodes.pick: a node not demoted first, then fewer in flight, then node 1.
    const [behind0, behind1] = demotedUntil.map((until) => model.demote && (until as number) > arrived)
    const first = behind0 !== behind1 ? Number(behind0) : (inFlight[0] as number) <= (inFlight[1] as number) ? 0 : 1
    const sent = [arrived, Number.NaN]
    let done = false
    const answer = (node: number): void => {
      if (done) return
      done = true
      inFlight[node] = (inFlight[node] as number) - 1
      hedging.answered(node, time.now() - (sent[node === first ? 0 : 1] as number))
      const other = node === first ? 1 - first : first
      const otherSent = sent[node === first ? 1 : 0] as number
      if (!Number.isNaN(otherSent)) {
        inFlight[other] = (inFlight[other] as number) - 1
        if (model.overtakenCounts) hedging.overtaken(other, time.now() - otherSent)
        // The hedge won: the first node was overtaken.
        if (node !== first) demotedUntil[first] = time.now() + OVERTAKEN_DEMOTES_MS
      }
      if (index >= WARM_UP) latencies.push(time.now() - arrived + 1.2 + 0.3 * Math.exp(0.8 * normal()))
    }
    time.after(attempt(first), () => { answer(first) })
    time.after(hedging.delayMs(first), () => {
      if (done || hedging.admit(false) !== undefined) return
      if (index >= WARM_UP) hedges++
      sent[1] = time.now()
      time.after(attempt(1 - first), () => { answer(1 - first) })
    })
  }
  for (let i = 0; i < READS; i++) time.after(i * INTERVAL_MS, () => { read(i) })
  time.run()
  latencies.sort((a, b) => a - b)
  return { p99: latencies[Math.ceil(0.99 * latencies.length) - 1] as number, hedged: hedges / (READS - WARM_UP) }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
const SEEDS = [17, 118, 219, 320, 421, 522, 623]

console.log('| σ | quantile | floor | overtaken waits count | overtaken node demoted | client p99: slow node / none / node 1 farther | ratio | reads hedged: slow node / none / node 1 farther |')
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |')
for (const sigma of [0.9, 1.3]) {
  for (const [quantile, floorMs, overtakenCounts, demote] of [[0.95, 20, true, false], [0.95, 10, true, false], [0.95, 20, true, true], [0.95, 10, true, true], [0.95, 5, true, true]] as const) {
    const runs = (node1: Model['node1']): Array<{ p99: number, hedged: number }> =>
      SEEDS.map((seed) => simulate({ quantile, floorMs, overtakenCounts, node1, sigma, demote, seed }))
    const [slow, none, farther] = [runs('slow'), runs('steady'), runs('farther')]
    const p99 = [slow, none, farther].map((side) => median(side.map((r) => r.p99))) as [number, number, number]
    const hedged = [slow, none, farther].map((side) => `${(100 * median(side.map((r) => r.hedged))).toFixed(1)}%`)
    console.log(`| ${sigma} | ${quantile} | ${floorMs} ms | ${overtakenCounts ? 'yes' : 'no'} | ${demote ? 'yes' : 'no'} | ${p99.map((v) => v.toFixed(1)).join(' / ')} ms | ${(p99[0] / p99[1]).toFixed(2)}× | ${hedged.join(' / ')} |`)
  }
}
