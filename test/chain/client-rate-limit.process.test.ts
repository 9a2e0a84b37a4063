import t, { type Test } from 'tap'
import type { ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { startChainNodes } from '../fixtures/chain.js'
import { serveMain } from '../fixtures/serve-main.js'
import { until } from '../../harness/wait.js'

// Issue 33: a node that rate-limits is the node's overload, not the client's fault. Its 429
// (a gateway's ResourceExhausted, or a proxy's page) or its proxy's 503 page sends the read to
// another node at once and skips the node for its Retry-After; the client sees 429 only when
// every node refuses. Over a real socket against node dist/main.js, the cache as deployed.

t.setTimeout(120_000)

const QUERIES = '/productscience'
const LATEST_READS = ['/v1/epochs/latest', '/v1/participants', '/v1/pricing', '/v1/restrictions/status']
const NGINX_429 = '<html><head><title>429 Too Many Requests</title></head><body><center><h1>429 Too Many Requests</h1></center><hr><center>nginx</center></body></html>'
const NGINX_503 = '<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center><hr><center>nginx</center></body></html>'

async function serve (t: Test, sims: ChainSimulator[]): Promise<{ origin: string, lines: Array<Record<string, unknown>> }> {
  const { main, origin } = await serveMain(t, sims, { EDGE_API_CACHE_SIZE: '64MiB' })
  return { origin, lines: main.lines }
}

/** Each of the four latest-state reads `rounds` times, one after the other: the statuses seen, counted. */
async function readAll (origin: string, rounds: number): Promise<Map<number, number>> {
  const statuses = new Map<number, number>()
  for (let i = 0; i < rounds; i++) {
    for (const path of LATEST_READS) {
      const res = await fetch(origin + path, { signal: AbortSignal.timeout(10_000) })
      await res.arrayBuffer()
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
    }
  }
  return statuses
}

const RATE_LIMITED = 'chain node rate-limited; skipped until its Retry-After'

const cases: Array<{ name: string, refuse: (sim: ChainSimulator) => void, retryInMs: number, line: string }> = [
  { name: 'a gateway\'s 429 (gRPC ResourceExhausted, code 8), Retry-After: 30', refuse: (sim) => { sim.fail(QUERIES, 8, 'rate limit exceeded: too many requests', 429, { 'retry-after': '30' }) }, retryInMs: 30_000, line: RATE_LIMITED },
  { name: 'a proxy\'s 429 page, Retry-After as an HTTP-date 20 s ahead', refuse: (sim) => { sim.raw(QUERIES, 429, NGINX_429, { 'retry-after': new Date(Date.now() + 20_000).toUTCString() }) }, retryInMs: 20_000, line: RATE_LIMITED },
  // Not the gateway speaking: the node is down (not there), probed again after its Retry-After.
  { name: 'a proxy\'s 503 page (nginx limit_req), Retry-After: 15', refuse: (sim) => { sim.raw(QUERIES, 503, NGINX_503, { 'retry-after': '15' }) }, retryInMs: 15_000, line: 'chain node down' }
]

for (const { name, refuse, retryInMs, line } of cases) {
  t.test(`the preferred node answers ${name}, one healthy peer: 0 client errors, the node skipped for its Retry-After`, async (t) => {
    const sims = (await startChainNodes(t, [0, 0])).sims
    const [limited, healthy] = sims as [ChainSimulator, ChainSimulator]
    const { origin, lines } = await serve(t, sims)
    // After the boot: an HTTP-date counts from when it is written.
    refuse(limited)
    const statuses = await readAll(origin, 5)
    t.same([...statuses], [[200, 20]], 'every read 200: 0 client 429s (or 503s)')
    t.equal(limited.count(QUERIES), 1, 'the node that refused was asked once, then skipped')
    t.ok(healthy.count(QUERIES) >= LATEST_READS.length, `the peer answered the reads (${healthy.count(QUERIES)} queries; repeats within a block are cache hits)`)
    const down = lines.filter((l) => l.msg === line)
    t.equal(down.length, 1, 'one line: the node is skipped')
    t.equal(down[0]?.node, limited.url)
    const waits = down[0]?.retryInMs as number
    t.ok(waits > retryInMs - 2000 && waits <= retryInMs, `skipped for its Retry-After: ${waits} ms`)
  })
}

t.test('every node rate-limits: the client sees the 429', async (t) => {
  const sims = (await startChainNodes(t, [0, 0])).sims
  for (const sim of sims) sim.fail(QUERIES, 8, 'rate limit exceeded: too many requests', 429, { 'retry-after': '30' })
  const { origin } = await serve(t, sims)
  const res = await fetch(`${origin}/v1/restrictions/status`)
  t.equal(res.status, 429)
  t.same(await res.json(), { message: 'rate limit exceeded: too many requests' }, 'the gateway\'s own words')
  t.equal(res.headers.get('retry-after'), '30', 'and the node\'s Retry-After')
  t.same(sims.map((sim) => sim.count(QUERIES)), [1, 1], 'each node asked once')
})

t.test('readiness probes during a node\'s Retry-After window do not re-admit it: it stays skipped until the deadline, one line', async (t) => {
  const { clock, sims } = await startChainNodes(t, [0, 0])
  // Blocks move (one per 50 ms): each round of reads is a miss, a chain read.
  clock.every(50)
  t.teardown(() => { clock.stop() })
  const [limited, healthy] = sims as [ChainSimulator, ChainSimulator]
  const { origin, lines } = await serve(t, sims)
  // Its queries are refused; node_info, what readiness probes, passes the limiter.
  limited.fail(QUERIES, 8, 'rate limit exceeded', 429, { 'retry-after': '30' })
  // Until it has refused one: a round of reads may all go to the other node first (a CI run's
  // first round did, and its later refusal was counted as a read sent during the window).
  await until(async () => {
    await readAll(origin, 1)
    return limited.count(QUERIES) > 0
  }, 'the node to refuse a read', { intervalMs: 50 })
  const asked = limited.count(QUERIES)
  // 4 s of reads and /readyz checks: more than readiness's 3 s cache, so its probe of every node runs again.
  const end = performance.now() + 4000
  let probes = 0
  while (performance.now() < end) {
    const ready = await fetch(`${origin}/readyz`)
    t.equal(ready.status, 200)
    await ready.arrayBuffer()
    const statuses = await readAll(origin, 1)
    if (statuses.get(200) !== LATEST_READS.length) t.fail(`a read failed: ${JSON.stringify([...statuses])}`)
    probes++
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  t.ok(limited.count('/cosmos/base/tendermint/v1beta1/node_info') >= 2, 'readiness probed the node again during the window (and it answered)')
  t.equal(limited.count(QUERIES), asked, `no read sent to it in ${probes} rounds of reads and readiness checks`)
  t.ok(healthy.count(QUERIES) > 0)
  t.equal(lines.filter((l) => l.msg === RATE_LIMITED).length, 1, 'one line for the episode')
  t.notOk(lines.some((l) => l.msg === 'chain node up'), 'never logged up: it was never down')
})

t.test('a token-bucket node (429, 200, 429, …) with concurrent reads stays skipped until its Retry-After: no flapping, one line per episode', async (t) => {
  // Well past the reads below (1.5 s, or a round and 1 s more): a loaded machine's last round may end late.
  const RETRY_AFTER_S = 5
  const { clock, sims } = await startChainNodes(t, [0, 0])
  clock.every(50)
  t.teardown(() => { clock.stop() })
  const [limited] = sims as [ChainSimulator, ChainSimulator]
  const { origin, lines } = await serve(t, sims)
  let arrivals = 0
  limited.onRequest = (pathname) => {
    if (!pathname.startsWith(QUERIES)) return
    // Every other query is let through by the bucket.
    if (++arrivals % 2 === 1) limited.fail(QUERIES, 8, 'rate limit exceeded', 429, { 'retry-after': String(RETRY_AFTER_S) })
    else limited.clearFaults()
  }
  const started = performance.now()
  let errors = 0
  // The reads in flight when it first refused may reach it (and a hedge of one of them, on a
  // loaded machine); once a round has ended with a refusal in it, the client has read the 429,
  // and no round after it sends the node a query.
  let settled: { arrivals: number, at: number } | undefined
  while (performance.now() - started < 1500 || settled === undefined || performance.now() - settled.at < 1000) {
    const results = await Promise.all(LATEST_READS.map(async (path) => (await fetch(origin + path)).status))
    errors += results.filter((status) => status !== 200).length
    if (settled === undefined && arrivals > 0) settled = { arrivals, at: performance.now() }
  }
  t.equal(errors, 0, '0 client errors')
  const limitedQueries = arrivals
  t.equal(limitedQueries, settled?.arrivals, `the node was asked ${limitedQueries} times, all in the round in which it first refused; none in the rounds of the ${Math.round(performance.now() - (settled?.at ?? 0))} ms after it, not at request rate`)
  t.equal(lines.filter((l) => l.msg === RATE_LIMITED).length, 1, 'one warn line for the episode')
  t.notOk(lines.some((l) => l.msg === 'chain node up' || l.msg === 'chain node down'), 'no down/up flapping')
  // After the deadline it takes reads again.
  limited.onRequest = undefined
  limited.clearFaults()
  await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_S * 1000 + 100 - (performance.now() - started)))
  await until(async () => {
    await readAll(origin, 1)
    return limited.count(QUERIES) > limitedQueries
  }, 'the node read again after its Retry-After')
})
