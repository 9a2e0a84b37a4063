import { request } from 'node:http'
import t from 'tap'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { freePort } from '../../harness/ports.js'
import { until } from '../../harness/wait.js'
import { serveMain } from '../fixtures/serve-main.js'

// CLIENTS clients that open a /v1/events stream or a long-poll on dist/main.js and vanish at
// random moments: before their request is read, while the replica asks its node for the head
// (blocks/latest made slow, so that await is wide), while held. Once the last has left, the
// open streams, the held requests and the replica's head polls are back to zero (at 1365d2e a
// client that left during that await left a stream open for good, its head poll running,
// and a long-poll held until its wait ended).

const CLIENTS = Number(process.env.WAITING_LEAVE_CLIENTS ?? 1000)
const ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4']
const LATEST = '/cosmos/base/tendermint/v1beta1/blocks/latest'

t.setTimeout(120_000)

/** Opens `url` and destroys the request `leaveMs` later, whatever it got by then. */
async function visit (url: string, from: string, leaveMs: number): Promise<void> {
  await new Promise<void>((resolve) => {
    const req = request(url, { headers: { accept: 'text/event-stream' }, localAddress: from, agent: false }, (res) => { res.resume() })
    req.on('error', () => {})
    req.on('close', () => resolve())
    req.end()
    setTimeout(() => { req.destroy() }, leaveMs)
  })
}

async function gauge (metrics: string, name: string): Promise<number> {
  const text = await (await fetch(metrics)).text()
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1])
}

t.test(`${CLIENTS} clients open a stream or a long-poll and vanish at random moments: streams, held requests and head polls back to zero`, async (t) => {
  const sim = await startChainSimulator()
  t.teardown(async () => await sim.close())
  // Slower than EDGE_API_HEAD_MAX_AGE, within the head poll's budget (500 ms): a request arriving
  // finds the head stale and awaits a poll round, and its client may leave meanwhile.
  sim.latency(400, LATEST)
  const metricsPort = await freePort()
  const { origin } = await serveMain(t, [sim], { EDGE_API_METRICS_PORT: String(metricsPort), EDGE_API_METRICS_HOST: '127.0.0.1', EDGE_API_HEAD_MAX_AGE: '100ms' })
  const metrics = `http://127.0.0.1:${metricsPort}/metrics`
  const head = sim.clock.height
  const visits = Array.from({ length: CLIENTS }, async (_, i) => {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 3000))
    const path = i % 2 === 0 ? '/v1/events' : `/v1/epochs/latest?afterHeight=${head}&wait=30`
    await visit(`${origin}${path}`, ADDRESSES[i % ADDRESSES.length] as string, Math.random() * 2000)
  })
  // Seen while the clients come and go, each gauge on its own: on a loaded machine a scrape is
  // slow, and an instant with both above zero may fall between two of them.
  const visiting = { over: false }
  const seen = { streams: 0, held: 0 }
  const watching = (async () => {
    while (!visiting.over) {
      seen.streams = Math.max(seen.streams, await gauge(metrics, 'edge_api_event_streams_open'))
      seen.held = Math.max(seen.held, await gauge(metrics, 'edge_api_held_requests'))
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })()
  await Promise.all(visits)
  visiting.over = true
  await watching
  t.ok(seen.streams > 0 && seen.held > 0, `streams and long-polls held while their clients were there (at most ${seen.streams} and ${seen.held} at once)`)
  const leftAt = performance.now()
  // The goal is a second after the last client left; the bound is three, for a loaded 2-core machine.
  await until(async () => await gauge(metrics, 'edge_api_event_streams_open') === 0 && await gauge(metrics, 'edge_api_held_requests') === 0,
    'no stream open and no request held', { timeoutMs: 3000, intervalMs: 20 })
  t.pass(`streams and held requests at zero ${(performance.now() - leftAt).toFixed(0)} ms after the last client left`)
  // The polls the last requests started (0.4 s each at the node, queued behind one another on a
  // loaded machine) end; then none starts. A follow left open polls every SLOW_MS at most apart for good, so
  // the count never settles and this fails by name; a settled count is then watched for 2 s more.
  let polls = sim.count(LATEST)
  await until(async () => {
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const settled = sim.count(LATEST) === polls
    polls = sim.count(LATEST)
    return settled
  }, 'the head polls to stop once nobody waits (a second without one)', { timeoutMs: 15_000, intervalMs: 0 })
  await new Promise((resolve) => setTimeout(resolve, 2000))
  t.equal(sim.count(LATEST) - polls, 0, 'no head poll once nobody waits')
})
