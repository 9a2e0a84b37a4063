import t from 'tap'
import { ChainClient } from '../../src/chain/client.js'
import { NO_CONTEXT, type ReadContext } from '../../src/chain/types.js'
import { ChainTimeoutError, OverShareError } from '../../src/errors.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { startChain } from '../fixtures/chain.js'
import { NODE_INFO } from '../../harness/chain-simulator/data/node.js'
import { until } from '../../harness/wait.js'

// The client as its users see it: probes, node state, the queue. Each part has its own test
// file (exchange, deadline, read-front, failover, hedged-read, pinning, paths).

const NODE = '/cosmos/base/tendermint/v1beta1/node_info'

t.test('probe asks one node by its index; there is no node beyond the list', async (t) => {
  const { chain: client } = await startChain(t)
  t.equal(client.nodeCount, 1)
  t.same(await client.probe(NODE, 1000, 0), NODE_INFO)
  await t.rejects(client.probe(NODE, 1000, 1), new RangeError('no chain node 1; there are 1'))
})

t.test('probe bypasses the limiter and coalescing, under its own budget', async (t) => {
  const { chain: client, sim } = await startChain(t, { concurrency: 1 })
  sim.hang('/productscience')
  const blocked = client.get('/productscience/inference/inference/epoch_info').catch(() => undefined)
  t.same(await client.probe(NODE, 1000), NODE_INFO, 'answered while the only slot is taken')
  await t.rejects(client.probe('/productscience/x', 50), ChainTimeoutError)
  sim.clearFaults()
  await blocked
})

t.test('a refused node and its failover are two exchanges, by node; nodesUp and queued read the client state', async (t) => {
  const seen: Array<[number, string]> = []
  const observer = { exchange: (node: number, outcome: string) => { seen.push([node, outcome]) } }
  const [a, b] = await Promise.all([startChainSimulator(), startChainSimulator()])
  const client = new ChainClient({ baseUrl: [a.url, b.url], timeoutMs: 2000, concurrency: 1, observer, nodeBackoff: { initialMs: 60_000, maxMs: 60_000 } })
  t.teardown(async () => { await client.close(); await a.close(); await b.close() })
  t.same(client.nodesUp, [true, true])
  await a.refuse()
  t.same(await client.get(NODE), NODE_INFO)
  t.same(seen, [[1, 'unavailable'], [2, 'ok']])
  t.same(client.nodesUp, [false, true], 'node 1 is skipped as down')
  b.latency(150, NODE)
  const reads = [client.get(NODE), client.get(`${NODE}?1`), client.get(`${NODE}?2`)]
  t.equal(client.queued, 2, 'one read in flight (concurrency 1), two waiting')
  await Promise.all(reads)
  t.equal(client.queued, 0)
})

t.test('every reader waits in the read queue as its context\'s client: with the queue full of one client\'s reads, another\'s takes the place of the newest', async (t) => {
  const { chain: client, sim } = await startChain(t, { concurrency: 1, queueLimit: 2, coalesce: false })
  await client.latest(NO_CONTEXT)
  const height = client.heads.served
  const readers: Record<string, (context: ReadContext) => Promise<unknown>> = {
    get: async (context) => client.get(NODE, {}, undefined, context),
    at: async (context) => client.at(height, context).get(NODE),
    latest: async (context) => (await client.latest(context)).get(NODE),
    reader: async (context) => (await client.reader(context)).get(NODE),
    readLatest: async (context) => (await client.readLatest(NODE, {}, context)).value,
    unpinned: async (context) => client.unpinned(context).get(NODE),
    unhedged: async (context) => client.unhedged(context).get(NODE)
  }
  sim.latency(40, NODE)
  for (const [name, read] of Object.entries(readers)) {
    // One read running, two waiting: the queue is full.
    const heavy = [0, 1, 2].map(async () => read({ client: 'heavy' }).then(() => 'served', (err: unknown) => err))
    await until(() => client.queued === 2, `${name}: the queue full of the heavy client's reads`)
    t.same(await read({ client: 'polite' }), NODE_INFO, `${name}: the other client's read let in`)
    t.match(await Promise.all(heavy), ['served', 'served', OverShareError], `${name}: the heavy client's newest refused as its excess`)
  }
})
