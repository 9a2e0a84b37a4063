import t from 'tap'
import { REAL_CLOCK } from '../../src/clock.js'
import { Deadlines } from '../../src/chain/deadline.js'
import { RpcAnswerError, RpcEndpoints } from '../../src/chain/rpc-endpoints.js'
import { BlockClock } from '../../harness/chain-simulator/block-clock.js'
import { SignedChain } from '../../harness/chain-simulator/signed-chain.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'

// The nodes' CometBFT RPC endpoints over a real socket (the simulator's RPC answers as
// CometBFT 0.38's URI handler does): the JSON-RPC result, or the error it names; an answer
// that is not JSON-RPC refused saying what it is; each read under its deadline.

const clock = new BlockClock()
const sim = await startChainSimulator(0, { clock, chain: new SignedChain() })
t.teardown(async () => { await sim.close() })
t.afterEach(() => { sim.clearFaults() })
const deadlines = new Deadlines(REAL_CLOCK)

t.test('the result of a call; a node without an endpoint has none', async (t) => {
  const endpoints = RpcEndpoints.create([undefined, `${sim.url}/`], 1024 * 1024) as RpcEndpoints
  t.teardown(async () => { await endpoints.close() })
  t.same([endpoints.has(0), endpoints.has(1), endpoints.has(2)], [false, true, false])
  const reads = endpoints.reads(deadlines, 10_000)
  t.same([reads.has(0), reads.has(1)], [false, true], 'the cursor\'s reads say the same')
  const result = await reads.get(1, `/commit?height=${clock.height}`) as { signed_header: { header: { height: string } }, canonical: boolean }
  t.same([result.signed_header.header.height, result.canonical], [String(clock.height), false], 'the head\'s signed header, its commit the one seen')
  await t.rejects(reads.get(0, '/commit'), new RangeError('chain node 0 has no RPC endpoint'))
  t.equal(RpcEndpoints.create(undefined, 1024), undefined, 'no URLs: no endpoints')
})

t.test('a base URL with a path: the calls under it', async (t) => {
  const endpoints = new RpcEndpoints([`${sim.url}/rpc/`], 1024 * 1024)
  t.teardown(async () => { await endpoints.close() })
  sim.override('/rpc/status', { jsonrpc: '2.0', id: -1, result: { node_info: {} } })
  t.same(await endpoints.reads(deadlines, 10_000).get(0, '/status'), { node_info: {} })
})

t.test('an answer that is not a result is refused saying what it is', async (t) => {
  const endpoints = new RpcEndpoints([sim.url], 1024 * 1024)
  t.teardown(async () => { await endpoints.close() })
  const get = async (path: string): Promise<unknown> => await endpoints.reads(deadlines, 10_000).get(0, path)
  await t.rejects(get(`/commit?height=${clock.height + 1}`), new RpcAnswerError(`${sim.url}/commit?height=${clock.height + 1} answered the error "Internal error": "height ${clock.height + 1} must be less than or equal to the current blockchain height ${clock.height}"`), 'a JSON-RPC error (status 500): its message and data')
  sim.raw('/commit', 502, '<html>bad gateway</html>')
  await t.rejects(get('/commit'), new RpcAnswerError(`${sim.url}/commit answered 502 with a body that is not JSON`), 'a proxy\'s page')
  sim.clearFaults()
  sim.override('/commit', { jsonrpc: '2.0', id: -1 })
  await t.rejects(get('/commit'), new RpcAnswerError(`${sim.url}/commit answered 200 without a JSON-RPC result`), 'neither a result nor an error')
  sim.override('/commit', null)
  await t.rejects(get('/commit'), new RpcAnswerError(`${sim.url}/commit answered 200 without a JSON-RPC result`), 'JSON null')
  sim.clearFaults()
  await t.rejects(get('/genesis'), new RpcAnswerError(`${sim.url}/genesis answered 501 without a JSON-RPC result`), 'a call the node does not serve (the simulator\'s gateway error)')
})

t.test('a node that does not answer: the read fails at its deadline', async (t) => {
  const endpoints = new RpcEndpoints([sim.url], 1024 * 1024)
  t.teardown(async () => { await endpoints.close() })
  sim.hang('/commit')
  await t.rejects(endpoints.reads(deadlines, 100).get(0, '/commit'), { name: 'ChainTimeoutError' })
  t.equal(deadlines.size, 0, 'its deadline released')
})
