import t from 'tap'
import { NODE_LYING, RPC_UNREADABLE } from '../../src/light/cursor.js'
import { sampleValue } from '../../harness/prometheus.js'
import { until } from '../../harness/wait.js'
import { verifyingService } from '../fixtures/light/verifying-service.js'

// The verified-height cursor with each node's CometBFT RPC endpoint (EDGE_API_CHAIN_RPC_URL),
// in a replica listening on a real socket over three nodes of a signed simulated chain, each
// with its RPC on a port of its own (test/fixtures/light/verifying-service.ts): the head is
// verified with the commit the node has seen, so V = L - 1 (L - 2 without it:
// cursor.test.ts); a node whose RPC lies is caught as one whose gateway lies.

const LATEST = '/v1/epochs/latest'
const BLOCKS = '/cosmos/base/tendermint/v1beta1/blocks/'

t.test('each node\'s RPC: V = L - 1, in /v1/status and X-Verified-Height; the head\'s commit read from /commit, no block by height', async (t) => {
  const { nodes, rpcs, clock, get, verification, verifiedAt } = await verifyingService(t, {}, { rpc: true })
  await verifiedAt(clock.height - 1, 'V = L - 1 from the trust root')
  for (const node of [...nodes, ...rpcs]) node.resetCounts()
  const blocks = 5
  for (let block = 0; block < blocks; block++) {
    clock.advance()
    await verifiedAt(clock.height - 1, `V after block ${clock.height}`)
  }
  t.same(await verification(), { state: 'verifying', verifiedHeight: clock.height - 1, headHeight: clock.height, blocksBehind: 1 }, '/v1/status: one block behind')
  const answer = await get(LATEST)
  t.equal(answer.status, 200)
  t.equal(Number(answer.headers.get('x-verified-height')), clock.height - 1, 'the answer says V = L - 1')
  const sum = (of: typeof nodes, path: string): number => of.reduce((n, node) => n + node.count(path), 0)
  const commits = sum(rpcs, '/commit')
  t.ok(commits >= blocks && commits <= 2 * blocks, `one /commit per block followed (${commits} for ${blocks} blocks; a poll may land between two steps)`)
  t.equal(sum(nodes, BLOCKS) - sum(nodes, `${BLOCKS}latest`), 0, 'no gateway block read by height: the head poll\'s block and RPC\'s commit are enough')
})

t.test('a node\'s RPC lying, its gateway honest: caught, out of rotation, one error line naming the node; V goes on from the others', async (t) => {
  for (const lie of ['forgedAppHashFrom', 'forkFrom'] as const) {
    await t.test(lie, async (t) => {
      const { service, nodes, rpcs, clock, logs, verifiedAt } = await verifyingService(t, {}, { rpc: true })
      await verifiedAt(clock.height - 1, 'following before the lie')
      // The first node's: it is followed first, so its RPC is read at each new head.
      const liar = rpcs[0] as NonNullable<typeof rpcs[0]>
      liar.lies[lie] = clock.height + 1
      for (let block = 0; block < 3; block++) {
        clock.advance()
        await verifiedAt(clock.height - 1, `V after block ${clock.height}`)
      }
      const lines = logs.filter((l) => l.msg === NODE_LYING)
      t.equal(lines.length, 1, 'one error line')
      t.match(lines[0], { level: 50, node: (nodes[0] as NonNullable<typeof nodes[0]>).url, height: String(clock.height - 2) }, 'naming the node and the height its RPC first lied at')
      const scrape = await (await fetch(`http://127.0.0.1:${service.metricsPort}/metrics`)).text()
      t.equal(sampleValue(scrape, 'edge_api_chain_node_lying', { node: '1' }), 1, 'the metric says which node')
      t.equal(sampleValue(scrape, 'edge_api_chain_node_up', { node: '1' }), 0, 'out of rotation')
      t.same(service.chain.nodesLying, [true, false, false])
    })
  }
})

t.test('a node\'s RPC away: one warn line naming it, the node followed over its gateway meanwhile; every RPC away: V = L - 2, then L - 1 again', async (t) => {
  const { nodes, rpcs, clock, logs, verification, verifiedAt } = await verifyingService(t, {}, { rpc: true })
  await verifiedAt(clock.height - 1, 'following')
  const away = (): Array<Record<string, unknown>> => logs.filter((l) => l.msg === RPC_UNREADABLE)
  await (rpcs[0] as NonNullable<typeof rpcs[0]>).refuse()
  for (let block = 0; block < 3; block++) {
    clock.advance()
    await verifiedAt(clock.height - 1, `V after block ${clock.height}, from the other nodes' RPC`)
  }
  await until(() => away().length > 0, 'the warn line', { timeoutMs: 20_000, intervalMs: 50 })
  // Once per episode: a step whose RPC read succeeded, or had nothing to read (the others
  // verified the head first), ends one, so on a loaded machine there may be one a block.
  t.ok(away().length <= 3, `at most one a block: ${away().length}`)
  t.ok(away().every((l) => l.node === (nodes[0] as NonNullable<typeof nodes[0]>).url && l.level === 40), 'a warn line naming the node whose RPC is away')
  t.equal(logs.filter((l) => l.msg === NODE_LYING || l.msg.startsWith('cannot read the blocks to verify')).length, 0, 'away is not lying, and its gateway is read')
  for (const rpc of rpcs) await rpc.refuse()
  for (let block = 0; block < 2; block++) clock.advance()
  await verifiedAt(clock.height - 2, 'V from the gateways while every RPC is away')
  t.match(await verification(), { state: 'verifying', verifiedHeight: clock.height - 2, blocksBehind: 2 }, 'two blocks behind, as without RPC')
  for (const rpc of rpcs) await rpc.restore()
  clock.advance()
  await verifiedAt(clock.height - 1, 'V = L - 1 again once the RPCs answer')
})
