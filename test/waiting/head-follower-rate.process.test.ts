import t from 'tap'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { FOLLOW_MS } from '../../src/waiting/head-follower.js'
import { serveMain } from '../fixtures/serve-main.js'
import { openSse } from '../fixtures/sse-client.js'

// What one open stream (one browser tab) costs the chain's nodes: the head follower polls each
// node once every FOLLOW_MS while anyone waits, so that many requests a second per node per
// replica. At 1365d2e, every 25 ms: 40 a second per node per replica (measured 35/s here).

const LATEST = '/cosmos/base/tendermint/v1beta1/blocks/latest'
const WINDOW_MS = 5000

t.test('one open stream: the replica asks its node for the head a few times a second, not 40', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(async () => await sim.close())
  const { origin } = await serveMain(t, [sim])
  const stream = await openSse(`${origin}/v1/events`)
  t.teardown(() => stream.close())
  await stream.next((event) => event.event === 'head')
  const before = sim.count(LATEST)
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS))
  const perSecond = (sim.count(LATEST) - before) / (WINDOW_MS / 1000)
  t.comment(`${perSecond.toFixed(1)} head polls/s with one stream open (FOLLOW_MS ${FOLLOW_MS})`)
  // At most one per FOLLOW_MS (and a head poll of the replica's own between); at least one a second, or blocks are learnt late.
  t.ok(perSecond <= 1000 / FOLLOW_MS + 1, `at most one poll per FOLLOW_MS (${perSecond.toFixed(1)}/s)`)
  t.ok(perSecond <= 10, `no more than 10 a second (${perSecond.toFixed(1)}/s; at 1365d2e ~35-40)`)
  t.ok(perSecond >= 1, 'still following the chain')
})
