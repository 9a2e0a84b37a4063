import t from 'tap'
import { startChainSimulator } from '../../../harness/chain-simulator/simulator.js'
import { until } from '../../../harness/wait.js'
import { REPLAY_WINDOW } from '../../../src/waiting/event-streams.js'
import { serveMain } from '../../fixtures/serve-main.js'
import { openCounting, rssMb, type CountingStream } from '../../fixtures/stream-clients.js'

// A replica (dist/main.js) under STREAMS event streams opened before it knows any head (its
// node refuses connections: just booted, its head poll failing), then given one (the node
// comes back). Each stream starts at the head, never replays the chain from height 0 (at
// 1365d2e: 1.8 million events on one stream, /healthz 3 ms → 9 s, RSS 83 → 737 MB).

const STREAMS = Number(process.env.EVENTS_BEFORE_HEAD_STREAMS ?? 1000)
// Distinct loopback addresses, so the per-client cap (1,024 by default) is not what is tested.
const ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4']

t.setTimeout(180_000)

t.test(`${STREAMS} streams opened before the first head, then a head: each starts at it; /healthz answers throughout; RSS bounded`, async (t) => {
  const sim = await startChainSimulator()
  t.teardown(async () => await sim.close())
  await sim.refuse()
  const { main, origin } = await serveMain(t, [sim])
  const pid = main.child.pid as number
  const streams: CountingStream[] = []
  for (let i = 0; i < STREAMS; i += 50) {
    streams.push(...await Promise.all(Array.from({ length: Math.min(50, STREAMS - i) }, async (_, j) => await openCounting(`${origin}/v1/events`, ADDRESSES[(i + j) % ADDRESSES.length]))))
  }
  t.teardown(() => { for (const stream of streams) stream.close() })
  t.same(new Set(streams.map((s) => s.status)), new Set([200]), 'every stream opened (200)')
  await until(() => streams.every((s) => s.retries.length > 0), 'every stream\'s first retry:')
  t.equal(streams.filter((s) => s.ids > 0).length, 0, 'no event while no head is known (at 1365d2e: id 0)')
  const rssBefore = await rssMb(pid)

  let slowest = 0
  const probing = { on: true }
  const probe = (async () => {
    while (probing.on) {
      const startedAt = performance.now()
      const res = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(30_000) })
      await res.arrayBuffer()
      slowest = Math.max(slowest, performance.now() - startedAt)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  await sim.restore()
  const head = sim.clock.height
  await until(() => streams.every((s) => s.ids > 0), 'every stream\'s first event after the head is known', { timeoutMs: 60_000, intervalMs: 50 })
  // Long enough for a replay from height 0 to show (it sent ~200,000 events a second).
  await new Promise((resolve) => setTimeout(resolve, 2000))
  probing.on = false
  await probe
  const rssAfter = await rssMb(pid)

  const lowest = Math.min(...streams.map((s) => s.lowest as number))
  t.ok(lowest >= head - REPLAY_WINDOW, `no event below head − the replay window (lowest ${lowest}, head ${head})`)
  t.same(new Set(streams.map((s) => s.first)), new Set([head]), 'each stream starts at the head')
  t.ok(streams.every((s) => s.ids <= 5), `each was sent a few events, not a replay (most: ${Math.max(...streams.map((s) => s.ids))})`)
  // The goal is 100 ms. The prober shares a 2-core machine with the replica, the 1,000
  // clients and other work: at load 28 the slowest answer was 0.6–1.2 s, as often just before
  // the head came as after it (the machine, not the replica); at 1365d2e 8–9 s, while the
  // replay ran. So the bound sits between the two, and the events' and RSS's checks are the real ones.
  t.ok(slowest < 3000, `/healthz answered within 3 s throughout (slowest ${slowest.toFixed(0)} ms)`)
  // Streams cost ~10 KB each (sockets, buffers); a replay from 0 took RSS to 737 MB.
  t.ok(rssAfter - rssBefore < 100, `RSS ${rssBefore.toFixed(0)} → ${rssAfter.toFixed(0)} MB once the head came`)
  t.comment(`RSS ${rssBefore.toFixed(0)} MB with ${STREAMS} streams before the head, ${rssAfter.toFixed(0)} MB after; slowest /healthz ${slowest.toFixed(0)} ms`)
})
