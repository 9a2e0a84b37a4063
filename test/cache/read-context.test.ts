import t, { type Test } from 'tap'
import { buildTestApp } from '../fixtures/app.js'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { until } from '../../harness/wait.js'

// The readers a request is given (pin.ts, http-cache.ts) carry its client down to the chain's
// read queue, which serves clients in turn (fair-queue.ts): with the queue full of one client's
// reads, another client's read takes the place of the heavy client's newest (refused 429) and
// is served. Were its reads nobody's (NO_CLIENT), as the heavy client's would be too, it would
// be one more read of the same client behind a full queue, and refused.

const PARTICIPANT = '/productscience/inference/inference/inference_participant/'
const NODE_INFO = '/cosmos/base/tendermint/v1beta1/node_info'
const HEAVY = '127.0.0.5'
const POLITE = '127.0.0.6'
// One read at a time, three waiting: the heavy client fills the queue with four requests.
const QUEUE = 3

interface Case {
  readonly env?: Record<string, string>
  /** The slow chain path the heavy client's requests read. */
  readonly slow: string
  readonly heavy: (i: number) => string
  readonly polite: string
  readonly headers?: Record<string, string>
}

async function politeGoesNext (t: Test, c: Case): Promise<void> {
  const { app, sim, chain } = await buildTestApp(t, { env: c.env, chain: { concurrency: 1, queueLimit: QUEUE, coalesce: false } })
  // Any head poll (cache on, a minimum height) is done before the reads are slow.
  await app.inject({ url: '/v1/participants/warm', remoteAddress: HEAVY, headers: c.headers })
  sim.latency(150, c.slow)
  const heavy = Array.from({ length: QUEUE + 1 }, async (_, i) => app.inject({ url: c.heavy(i), remoteAddress: HEAVY, headers: c.headers }))
  await until(() => chain.queued === QUEUE, 'the read queue full of the heavy client\'s reads')
  const polite = await app.inject({ url: c.polite, remoteAddress: POLITE, headers: c.headers })
  t.equal(polite.statusCode, 200, 'the other client\'s read was let in and served')
  const statuses = (await Promise.all(heavy)).map((r) => r.statusCode)
  t.equal(statuses.filter((s) => s !== 200).length, 1, `the heavy client's newest read made room, refused (${statuses.join(' ')})`)
}

// The heavy client's reads are of distinct participants (none shared with another read), the polite client's of another.
const address = (i: number): string => `/v1/participants/${(PARTICIPANTS[i + 1] as { address: string }).address}`
const polite = `/v1/participants/${PARTICIPANTS[0].address}`

t.test('a latest-state answer without the cache, one node: its first read pins the height (ChainClient.reader)', async (t) => {
  await politeGoesNext(t, { slow: PARTICIPANT, heavy: address, polite })
})

t.test('a latest-state answer with the cache: read at the replica\'s head (ChainClient.latest)', async (t) => {
  await politeGoesNext(t, { env: { EDGE_API_CACHE_SIZE: '16MiB' }, slow: PARTICIPANT, heavy: address, polite })
})

t.test('a latest-state answer with X-Min-Block-Height: read at that height or later (MinHeights)', async (t) => {
  await politeGoesNext(t, { slow: PARTICIPANT, heavy: address, polite, headers: { 'x-min-block-height': '1' } })
})

t.test('an unpinned answer (/v1/versions: the node\'s own, never cached)', async (t) => {
  await politeGoesNext(t, { slow: NODE_INFO, heavy: () => '/v1/versions', polite: '/v1/versions' })
})
