import t from 'tap'
import { request } from 'undici'
import { BlockClock } from '../../../harness/chain-simulator/block-clock.js'
import { SignedChain } from '../../../harness/chain-simulator/signed-chain.js'
import { startChainSimulator } from '../../../harness/chain-simulator/simulator.js'
import { until } from '../../../harness/wait.js'
import { buildTestApp } from '../../fixtures/app.js'

// The edges of /v1/light/… over a real socket (issue 55 phase 4; the walk every new endpoint
// gets): a replica whose node never tells it a head (blocks/latest failing from its boot), a
// client gone while the node is asked, and a browser's preflight.

const LATEST = '/cosmos/base/tendermint/v1beta1/blocks/latest'
const BLOCKS = '/cosmos/base/tendermint/v1beta1/blocks/'

const clock = new BlockClock()
const chain = new SignedChain({})
const sim = await startChainSimulator(0, { clock, chain })
t.teardown(async () => { await sim.close() })
sim.fail(LATEST, 14, 'unavailable', 503)
const { app } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB' } })
await app.listen({ port: 0, host: '127.0.0.1' })
const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`

async function get (path: string): Promise<{ status: number, headers: Record<string, unknown>, body: any }> {
  const res = await request(`${origin}${path}`, { headersTimeout: 30_000, bodyTimeout: 30_000 })
  return { status: res.statusCode, headers: res.headers, body: await res.body.json() }
}

t.test('no head ever told (the node\'s blocks/latest failing since boot): a stored height\'s signed header and validator set are served', async (t) => {
  const height = clock.height - 5
  const header = await get(`/v1/light/signed-header/${height}`)
  t.equal(header.status, 200, JSON.stringify(header.body).slice(0, 200))
  t.equal(header.body.signed_header.header.height, String(height))
  t.equal(header.body.signed_header.commit.height, String(height), 'signed by its commit, carried by the block above')
  const set = await get(`/v1/light/validators/${height}`)
  t.equal(set.status, 200, JSON.stringify(set.body).slice(0, 200))
  t.ok(set.body.validators.length > 0)
})

t.test('a client gone while the node is asked: the read goes on, and the next client\'s answer joins it, the node not asked again', async (t) => {
  sim.clearFaults()
  sim.fail(LATEST, 14, 'unavailable', 503)
  const height = clock.height - 8
  sim.latency(500, BLOCKS)
  t.teardown(() => { sim.clearFaults() })
  const leaving = new AbortController()
  const asked = sim.count(`${BLOCKS}${height}`)
  const gone = fetch(`${origin}/v1/light/signed-header/${height}`, { signal: leaving.signal }).then(() => 'answered', () => 'gone')
  await until(() => sim.count(`${BLOCKS}${height}`) > asked, 'the node asked for the block', { timeoutMs: 10_000, intervalMs: 10 })
  leaving.abort()
  t.equal(await gone, 'gone')
  const before = sim.requests.length
  // The node answers 500 ms after it was asked; the next read joins that exchange (or finds
  // the answer kept) instead of asking again for a client that left.
  const next = await get(`/v1/light/signed-header/${height}`)
  t.equal(next.status, 200)
  t.equal(sim.requests.slice(before).filter((path) => path.startsWith(BLOCKS) && path !== LATEST).length, 0, 'the block not asked for again')
})

t.test('a browser\'s preflight (a fetch with If-None-Match) is answered 204 with what lets the page read the answer', async (t) => {
  const res = await fetch(`${origin}/v1/light/validators/${clock.height - 5}`, {
    method: 'OPTIONS',
    headers: { origin: 'https://wallet.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' }
  })
  await res.arrayBuffer()
  t.equal(res.status, 204)
  t.equal(res.headers.get('access-control-allow-origin'), '*')
  t.match(res.headers.get('access-control-allow-methods'), /GET/)
  t.match(res.headers.get('access-control-allow-headers'), /if-none-match/i)
  t.match(res.headers.get('access-control-expose-headers'), /ETag/)
})
