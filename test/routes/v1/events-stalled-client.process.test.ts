import t from 'tap'
import { startChainSimulator } from '../../../harness/chain-simulator/simulator.js'
import { serveMain } from '../../fixtures/serve-main.js'
import { openSse } from '../../fixtures/sse-client.js'
import { openAndStopReading } from '../../fixtures/stream-clients.js'

// A /v1/events client that stops reading (a raw socket, paused) does not hold a replica's
// drain: SIGTERM, and dist/main.js exits 0 soon after the streams' spread (5 s), far within its
// budget. At 1365d2e the drain ended such a stream with socket.end(), which waits for a client
// that never reads it: the replica ran to EDGE_API_SHUTDOWN_BUDGET and exited 1.

const BUDGET_S = 40

t.setTimeout(120_000)

t.test('SIGTERM with a stream whose client stopped reading: exit 0 well within the budget', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(async () => await sim.close())
  sim.clock.every(200)
  const { main, origin } = await serveMain(t, [sim], { EDGE_API_SHUTDOWN_BUDGET: `${BUDGET_S}s` })
  const port = Number(new URL(origin).port)
  const stalled = await Promise.all(Array.from({ length: 4 }, async () => await openAndStopReading(port, '/v1/events')))
  t.teardown(() => { for (const socket of stalled) socket.destroy() })
  const reader = await openSse(`${origin}/v1/events`)
  await reader.next((event) => event.event === 'head')
  // Heads keep coming (every 200 ms) into the stalled clients' buffers.
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const startedAt = performance.now()
  main.child.kill('SIGTERM')
  const exit = await main.exited
  const tookS = (exit.at - startedAt) / 1000
  t.equal(exit.code, 0, 'exit 0')
  // The streams end within 5 s (the spread), an unread end is given up 1 s later; the bound is
  // generous for a loaded 2-core machine, and a third of the budget.
  t.ok(tookS < BUDGET_S / 3, `exited in ${tookS.toFixed(1)} s (budget ${BUDGET_S} s)`)
  await reader.ended
  t.match(reader.events.at(-1), { retry: Number }, 'the reading client was ended with its retry:')
})
