import t from 'tap'
import { NODE_LYING } from '../../src/light/cursor.js'
import { sampleValue } from '../../harness/prometheus.js'
import { until } from '../../harness/wait.js'
import { verifyingService } from '../fixtures/light/verifying-service.js'

// The verified-height cursor in a replica listening on a real socket, over three nodes of a
// signed simulated chain (test/fixtures/light/verifying-service.ts): V follows the head, a
// lying node is caught and taken out of rotation, a validator-set change and a gap are
// verified. The cursor's own corners are in cursor-corners.test.ts.

const LATEST = '/v1/epochs/latest'

t.test('an honest chain: V follows the head two blocks behind, and latest answers say it', async (t) => {
  const { clock, get, verification, verifiedAt } = await verifyingService(t)
  await verifiedAt(clock.height - 2, 'V = L - 2 from the trust root')
  for (let block = 0; block < 3; block++) {
    clock.advance()
    await verifiedAt(clock.height - 2, `V after block ${clock.height}`)
  }
  const status = await verification()
  t.same(status, { state: 'verifying', verifiedHeight: clock.height - 2, headHeight: clock.height, blocksBehind: 2 }, '/v1/status says it follows, two blocks behind')
  const answer = await get(LATEST)
  t.equal(answer.status, 200)
  const verified = Number(answer.headers.get('x-verified-height'))
  t.equal(verified, clock.height - 2, 'the answer says V')
  t.ok(verified < Number(answer.headers.get('x-block-height')), 'below the height it was read at')
  t.equal(answer.headers.get('x-verification'), 'unverified; reason="headers-only"', 'headers mode: the answer says its value is not proven')
  t.match(answer.headers.get('access-control-expose-headers'), /\bX-Verification\b/, 'a page may read it')
})

t.test('verification off: no header, no verification in /v1/status', async (t) => {
  const { get } = await verifyingService(t, { EDGE_API_VERIFICATION: 'off' })
  const answer = await get(LATEST)
  t.equal(answer.status, 200)
  t.equal(answer.headers.get('x-verified-height'), null)
  t.equal(answer.headers.get('x-verification'), null)
  t.same(await (await get('/v1/status')).json(), { status: 'ok' })
})

for (const lie of ['forgedAppHashFrom', 'forkFrom'] as const) {
  t.test(`a node lying (${lie}): out of rotation, one error line naming it and the height, the metric 1, answers from the honest nodes`, async (t) => {
    const { service, nodes, clock, logs, get, verifiedAt } = await verifyingService(t)
    await verifiedAt(clock.height - 2, 'following before the lie')
    const liar = nodes[1] as NonNullable<typeof nodes[1]>
    liar.lies[lie] = clock.height + 1
    for (let block = 0; block < 4; block++) {
      clock.advance()
      await verifiedAt(clock.height - 2, `V after block ${clock.height}`)
    }
    const lines = logs.filter((l) => l.msg === NODE_LYING)
    t.equal(lines.length, 1, 'one error line')
    t.match(lines[0], { level: 50, node: liar.url, height: String(clock.height - 3) }, 'naming the node and the first height it lied at')
    const scrape = await (await fetch(`http://127.0.0.1:${service.metricsPort}/metrics`)).text()
    t.equal(sampleValue(scrape, 'edge_api_chain_node_lying', { node: '2' }), 1, 'the metric says which node')
    t.equal(sampleValue(scrape, 'edge_api_chain_node_lying', { node: '1' }), 0)
    t.equal(sampleValue(scrape, 'edge_api_chain_node_up', { node: '2' }), 0, 'out of rotation')
    liar.resetCounts()
    // A client's latest reads, while the liar's head stays as high as the others'.
    for (let i = 0; i < 20; i++) t.equal((await get(i % 2 === 0 ? LATEST : '/v1/participants')).status, 200)
    t.equal(liar.count('/productscience'), 0, 'no read went to the liar')
    clock.advance()
    await verifiedAt(clock.height - 2, 'V goes on from the honest nodes')
    t.equal(logs.filter((l) => l.msg === NODE_LYING).length, 1, 'still one line, blocks later')
  })
}

t.test('a validator-set change mid-run: verified across it, each new set fetched once', async (t) => {
  const { nodes, clock, chain, verifiedAt } = await verifyingService(t)
  await verifiedAt(clock.height - 2, 'following')
  for (const node of nodes) node.resetCounts()
  const epoch = chain.epochOf(clock.height)
  let blocks = 0
  // One block at a time, past the next change of the set (every 20 blocks).
  while (chain.epochOf(clock.height - 3) === epoch) {
    clock.advance()
    blocks++
    await verifiedAt(clock.height - 2, `V after block ${clock.height}`)
  }
  t.ok(blocks <= 21, `the change came within an epoch (${blocks} blocks)`)
  const setsFetched = nodes.reduce((n, node) => n + node.count('/cosmos/base/tendermint/v1beta1/validatorsets'), 0)
  // The next set is named one block ahead: one fetch for it, none for the unchanged blocks.
  t.ok(setsFetched >= 1 && setsFetched <= 2, `validator sets fetched only for the change: ${setsFetched} over ${blocks} blocks`)
})

t.test('a gap: a replica that missed 30 blocks verifies by skipping, reading a few blocks, not every one', async (t) => {
  const { nodes, clock, verifiedAt } = await verifyingService(t)
  await verifiedAt(clock.height - 2, 'following')
  for (const node of nodes) node.resetCounts()
  clock.advance(30)
  await verifiedAt(clock.height - 2, 'V after the gap')
  const blocksRead = nodes.reduce((n, node) => n + node.count('/cosmos/base/tendermint/v1beta1/blocks/') - node.count('/cosmos/base/tendermint/v1beta1/blocks/latest'), 0)
  t.ok(blocksRead <= 8, `blocks read by height across the gap of 30: ${blocksRead}`)
})

t.test('strict with a trust root no node serves: every node named lying once, not ready, saying why', async (t) => {
  const { get, logs } = await verifyingService(t, { EDGE_API_VERIFICATION: 'strict', EDGE_API_TRUST_HASH: 'AB'.repeat(32) })
  await until(() => logs.filter((l) => l.msg === NODE_LYING).length === 3, 'each node named lying', { timeoutMs: 20_000, intervalMs: 50 })
  const ready = await get('/readyz')
  t.equal(ready.status, 503)
  t.same(await ready.json(), { status: 'not ready', reason: 'not verified', error: 'no verified height yet' })
  t.match((await (await get('/v1/status')).json() as { verification: unknown }).verification, { state: 'starting', verifiedHeight: null, blocksBehind: null }, '/v1/status: nothing verified')
})

t.test('strict: not ready until V is known; ready once it follows', async (t) => {
  const { clock, get, verifiedAt } = await verifyingService(t, { EDGE_API_VERIFICATION: 'strict' })
  await verifiedAt(clock.height - 2, 'following')
  await until(async () => (await get('/readyz')).status === 200, 'ready once V follows the head', { timeoutMs: 20_000, intervalMs: 50 })
  t.pass('ready')
})
