import t from 'tap'
import { request } from 'undici'
import { BlockClock } from '../../harness/chain-simulator/block-clock.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { startMain, type MainProcess } from '../../harness/main-process.js'
import { MIN_HEIGHT_WAIT_MS } from '../../src/cache/min-height.js'

// The client-echoed minimum height over real sockets (docs/heights-and-cache.md §7): two
// replicas (node dist/main.js) on two nodes of one chain (a shared BlockClock), the second node
// a block behind. Replica A has the answer cache (pinned at its head), replica B none (one
// node: the first-answer pin), so both ways of choosing a height are crossed.

t.setTimeout(120_000)

const LATEST = '/v1/epochs/latest'

const clock = new BlockClock()
const ahead = await startChainSimulator(0, { clock, lag: 0 })
const behind = await startChainSimulator(0, { clock, lag: 1 })
const replicas: MainProcess[] = []
t.teardown(async () => {
  clock.stop()
  await Promise.all(replicas.map(async (r) => { r.child.kill('SIGKILL'); await r.exited }))
  await Promise.all([ahead.close(), behind.close()])
})

async function replica (chainUrl: string, cacheSize: string): Promise<string> {
  const main = startMain({ CHAIN_REST_URL: chainUrl, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_CACHE_SIZE: cacheSize })
  replicas.push(main)
  return `http://127.0.0.1:${await main.port()}`
}

const [a, b] = await Promise.all([replica(ahead.url, '64MiB'), replica(behind.url, '0')])

interface Answer { status: number, height: number, headers: Record<string, string | string[] | undefined>, body: { message?: string } }

async function get (origin: string, minimum?: string | string[]): Promise<Answer> {
  const headers = minimum === undefined ? [] : [minimum].flat().flatMap((value) => ['x-min-block-height', value])
  const res = await request(origin + LATEST, { headers })
  const body = await res.body.json() as { message?: string }
  return { status: res.statusCode, height: Number(res.headers['x-block-height']), headers: res.headers, body }
}

/**
 * A poller alternating between the replicas, `rounds` times each and for at least a second (a
 * few of the clock's 300 ms blocks, however fast this machine reads); echoing or not.
 */
async function alternate (rounds: number, echo: boolean): Promise<{ backwards: number, statuses: Map<number, number>, last: number }> {
  let highest = 0
  let backwards = 0
  const statuses = new Map<number, number>()
  const started = performance.now()
  for (let i = 0; i < rounds * 2 || (i % 2 === 1 || performance.now() - started < 1000); i++) {
    const res = await get(i % 2 === 0 ? a : b, echo && highest > 0 ? String(highest) : undefined)
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
    if (res.status !== 200) continue
    if (res.height < highest) backwards++
    highest = Math.max(highest, res.height)
  }
  return { backwards, statuses, last: highest }
}

t.test('a client alternating between the replicas: without the header it goes backwards, echoing X-Block-Height it never does', async (t) => {
  clock.every(300)
  const plain = await alternate(40, false)
  t.same([...plain.statuses.keys()], [200], 'every read 200')
  t.ok(plain.backwards > 0, `the control: sending nothing, ${plain.backwards} of ${plain.statuses.get(200) ?? 0} reads went backwards`)
  const echoing = await alternate(40, true)
  t.same([...echoing.statuses.keys()], [200], 'every read 200: the lagging replica waited for its node')
  t.equal(echoing.backwards, 0, `0 of ${echoing.statuses.get(200) ?? 0} reads went backwards`)
  t.ok(echoing.last > plain.last, 'the chain moved on meanwhile')
  clock.stop()
})

t.test('absurd values are a 400 that says what is wrong, on either replica', async (t) => {
  for (const origin of [a, b]) {
    const malformed = await get(origin, 'latest')
    t.equal(malformed.status, 400)
    t.match(malformed.body.message, /^X-Min-Block-Height must be a block height/)
    const twice = await get(origin, ['5', '6'])
    t.equal(twice.status, 400)
    t.equal(twice.body.message, 'X-Min-Block-Height must be sent once, with one block height')
    // Ten times this replica's ceiling and more: no replica can be that far behind (a 503 below it).
    const future = await get(origin, String(clock.height * 20))
    t.equal(future.status, 400)
    t.match(future.body.message, /^X-Min-Block-Height \d+ is \d+ blocks above the highest head of this service's chain nodes \(\d+\)/)
  }
})

t.test('the lagging replica waits for its node: 200 when it catches up within the bound, 503 with Retry-After when not', async (t) => {
  const height = (await get(a)).height
  t.equal(behind.head, height - 1, 'B\'s node is a block behind A\'s answer')
  setTimeout(() => clock.advance(), 500)
  const started = performance.now()
  const caught = await get(b, String(height))
  const waited = performance.now() - started
  t.equal(caught.status, 200)
  t.ok(caught.height >= height, `answered at ${caught.height}`)
  t.ok(waited >= 450 && waited < MIN_HEIGHT_WAIT_MS, `after ${Math.round(waited)} ms`)

  const beyond = clock.height + 1
  const startedAgain = performance.now()
  const none = await get(b, String(beyond))
  const gaveUp = performance.now() - startedAgain
  t.equal(none.status, 503)
  t.equal(none.headers['retry-after'], '1')
  t.match(none.body.message, `no chain node of this replica has reached block ${beyond} (X-Min-Block-Height) within ${MIN_HEIGHT_WAIT_MS} ms`)
  t.ok(gaveUp >= MIN_HEIGHT_WAIT_MS - 50 && gaveUp < MIN_HEIGHT_WAIT_MS + 3000, `after ${Math.round(gaveUp)} ms`)
})
