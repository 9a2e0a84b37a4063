import t from 'tap'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'
import { startChainSimulator, type ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { startChain } from '../fixtures/chain.js'
import { ChainClient } from '../../src/chain/client.js'
import { ChainUnavailableError } from '../../src/errors.js'

// Heights and pinning (src/chain/pinning.ts) through the client over real sockets: pinned
// readers send the height, the first answer pins the rest of one answer's reads, and the
// head poll asks the healthy nodes. test/chain/heights.test.ts covers them against the routes.

const NODE = '/cosmos/base/tendermint/v1beta1/node_info'

t.test('at() pins every read to its height; latest() to the best head, polled once', async (t) => {
  const { chain, sim } = await startChain(t)
  const pinned = chain.at(7)
  t.equal(pinned.height, 7)
  await pinned.get(NODE)
  await pinned.get(NODE, { x: '1' })
  const latest = await chain.latest()
  t.equal(latest.height, chain.heads.best, 'pinned to the best head')
  t.ok((latest.height as number) > 0)
  t.equal(sim.count(LATEST_BLOCK_PATH), 1, 'one poll')
  await latest.get(NODE)
  t.same(sim.askedHeights, [7, 7, undefined, latest.height])
})

t.test('one node: the first answer pins the reads after it; readLatest records the height it serves', async (t) => {
  const { chain, sim } = await startChain(t)
  const reader = await chain.reader()
  t.equal(reader.height, undefined, 'unpinned before its first answer')
  await Promise.all([reader.get(NODE), reader.get(NODE, { second: '1' })])
  const pinned = reader.height as number
  t.ok(pinned > 0, `pinned to ${pinned}`)
  t.same(sim.askedHeights, [undefined, pinned], 'the second read waited for the first and went at its height')
  t.equal(chain.heads.served, pinned, 'the height served')
  sim.clock.advance(2)
  const answer = await chain.readLatest(NODE)
  t.equal(answer.height, pinned + 2, 'a latest-state read at the node\'s latest')
  t.equal(chain.heads.served, pinned + 2, 'served from now on')
  t.same(sim.askedHeights, [undefined, pinned, undefined])
})

t.test('the head poll asks the healthy nodes only, every node when none is', async (t) => {
  const sims: ChainSimulator[] = await Promise.all([startChainSimulator(), startChainSimulator()])
  const [a, b] = sims as [ChainSimulator, ChainSimulator]
  const chain = new ChainClient({ baseUrl: [a.url, b.url], timeoutMs: 2000, concurrency: 4, headMaxAgeMs: 0, nodeBackoff: { initialMs: 60_000, maxMs: 60_000 } })
  t.teardown(async () => { await chain.close(); await a.close(); await b.close() })
  await chain.latest()
  t.same([a.count(LATEST_BLOCK_PATH), b.count(LATEST_BLOCK_PATH)], [1, 1], 'both asked')
  await a.refuse()
  await chain.get(NODE)
  t.same(chain.nodesUp, [false, true])
  await chain.latest()
  t.same(b.count(LATEST_BLOCK_PATH), 2, 'the healthy node asked again')
  await b.refuse()
  await t.rejects(chain.get(NODE))
  t.same(chain.nodesUp, [false, false])
  const unknown = await chain.latest()
  t.equal(unknown.height, undefined, 'no node told its head: unpinned until its first answer (issue 33)')
  await t.rejects(unknown.get(NODE), ChainUnavailableError)
})
