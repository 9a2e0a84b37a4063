import t from 'tap'
import { ChainClient } from '../../src/chain/client.js'
import { ChainAnswerTooLargeError, ChainBadAnswerError, ChainStatusError, ChainTimeoutError, ChainUnavailableError } from '../../src/errors.js'
import { NODE_INFO } from '../../harness/chain-simulator/data/node.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { startChain } from '../fixtures/chain.js'
import { until } from '../../harness/wait.js'

// One exchange with one node (src/chain/exchange.ts), through the client over a real socket:
// the parse, the size cap, how each way it ends is told to the caller and the observer.

const NODE = '/cosmos/base/tendermint/v1beta1/node_info'

t.test('GET returns the parsed JSON of a 2xx answer', async (t) => {
  const { chain: client, sim } = await startChain(t)
  t.same(await client.get(NODE), NODE_INFO)
  t.same(sim.requests, [NODE])
})

t.test('a base URL path prefix is kept', async (t) => {
  const sim = await startChainSimulator()
  const client = new ChainClient({ baseUrl: `${sim.url}/gateway/`, timeoutMs: 2000, concurrency: 1 })
  t.teardown(async () => { await client.close(); await sim.close() })
  await t.rejects(client.get(NODE), ChainStatusError)
  t.same(sim.requests, [`/gateway${NODE}`])
})

t.test('a gateway error body becomes a ChainStatusError with the mapped HTTP status', async (t) => {
  const { chain: client, sim } = await startChain(t)
  const cases: Array<[number, number]> = [[5, 404], [3, 400], [16, 401], [7, 403], [8, 429], [14, 503], [13, 500], [2, 500]]
  for (const [grpc, http] of cases) {
    sim.clearFaults()
    sim.fail(NODE, grpc, `code ${grpc}`)
    const error = await client.get(NODE).catch((err: unknown) => err) as ChainStatusError
    t.ok(error instanceof ChainStatusError)
    t.equal(error.grpcCode, grpc)
    t.equal(error.statusCode, http, `gRPC ${grpc} → HTTP ${http}`)
    t.equal(error.message, `code ${grpc}`)
  }
})

t.test('a non-2xx answer that is not the gateway speaking means the chain is unavailable', async (t) => {
  const { chain: client, sim } = await startChain(t)
  sim.raw(NODE, 502, '<html>Bad Gateway</html>')
  const error = await client.get(NODE).catch((err: unknown) => err) as ChainUnavailableError
  t.ok(error instanceof ChainUnavailableError)
  t.equal(error.statusCode, 503)
  t.equal(error.message, 'chain unavailable')
  t.match(String(error.cause), /chain answered 502 without a gateway error body/)
})

t.test('a 2xx answer that is not JSON is a bad gateway (502), with the detail as its cause', async (t) => {
  const { chain: client, sim } = await startChain(t)
  sim.raw(NODE, 200, 'not json')
  const error = await client.get(NODE).catch((err: unknown) => err) as ChainBadAnswerError
  t.ok(error instanceof ChainBadAnswerError)
  t.match(error, { statusCode: 502, message: 'chain answer is not JSON', code: 'EDGE_ERR_CHAIN_BAD_ANSWER' })
  t.match(error.cause, new RegExp(`^chain answered 200 with a body that is not JSON for ${sim.url}${NODE}: `))
  t.equal(sim.count(NODE), 1, 'an answer: not asked again')
})

const LIMIT = 64 * 1024

t.test('a chunked answer over the size limit is cut off: 502, its socket closed, the next read on a new one', async (t) => {
  // One connection, so a kept-alive socket is the one reused.
  const { chain: client, sim } = await startChain(t, { maxResponseBytes: LIMIT, concurrency: 1 })
  t.same(await client.get(NODE), NODE_INFO)
  sim.huge(NODE, 4 * LIMIT)
  const error = await client.get(NODE).catch((err: unknown) => err) as ChainAnswerTooLargeError
  t.ok(error instanceof ChainAnswerTooLargeError)
  t.match(error, { statusCode: 502, message: 'chain answer too large', code: 'EDGE_ERR_CHAIN_ANSWER_TOO_LARGE' })
  t.match(error.cause, /over the limit of 65536 bytes \(EDGE_API_CHAIN_MAX_RESPONSE\)/)
  sim.clearFaults()
  t.same(await client.get(NODE), NODE_INFO, 'the client keeps reading')
  t.equal(sim.count(NODE), 3, 'the large answer was not asked again')
  const [first, large, next] = sim.clientPorts
  t.equal(large, first, 'the large answer came on the kept-alive socket')
  t.not(next, large, 'which was closed, not reused')
})

t.test('a declared content-length over the limit is refused before its body is read', async (t) => {
  const { chain: client, sim } = await startChain(t, { maxResponseBytes: LIMIT })
  sim.huge(NODE, 64 * 1024 * 1024, true)
  const error = await client.get(NODE).catch((err: unknown) => err) as ChainAnswerTooLargeError
  t.ok(error instanceof ChainAnswerTooLargeError)
  t.match(error.cause, /with content-length 67108864/)
  sim.clearFaults()
  t.same(await client.get(NODE), NODE_INFO)
  t.not(sim.clientPorts[1], sim.clientPorts[0], 'the socket with the unread body was closed, not reused')
})

t.test('an answer exactly at the limit is read; a gateway error body over it is cut off too', async (t) => {
  const { chain: client, sim } = await startChain(t, { maxResponseBytes: LIMIT })
  sim.override(NODE, `"${'x'.repeat(LIMIT - 2)}"`)
  t.equal((await client.get(NODE) as string).length, LIMIT - 2)
  sim.clearFaults()
  sim.fail(NODE, 13, 'y'.repeat(LIMIT))
  await t.rejects(client.get(NODE), ChainAnswerTooLargeError)
})

t.test('a refused connection is ChainUnavailableError, and so is one reset as it opens', async (t) => {
  // Port 1 on loopback: nothing listens there (a process of the suite cannot take it).
  const refusing = new ChainClient({ baseUrl: 'http://127.0.0.1:1', timeoutMs: 2000, concurrency: 1 })
  t.teardown(async () => { await refusing.close() })
  const refused = await refusing.get(NODE).catch((err: unknown) => err) as ChainUnavailableError
  t.ok(refused instanceof ChainUnavailableError)
  t.match((refused.cause as { code?: string }).code, 'ECONNREFUSED')
  // The simulator's refuse(): it holds its port and resets each connection.
  const { chain: client, sim } = await startChain(t)
  await sim.refuse()
  const reset = await client.get(NODE).catch((err: unknown) => err) as ChainUnavailableError
  t.ok(reset instanceof ChainUnavailableError)
  t.match((reset.cause as { code?: string }).code, 'ECONNRESET')
  await sim.restore()
  t.same(await client.get(NODE), NODE_INFO, 'answered again after restore()')
})

t.test('the observer is told every exchange: node (1-based), outcome and seconds', async (t) => {
  const seen: Array<[number, string]> = []
  const seconds: number[] = []
  const observer = { exchange: (node: number, outcome: string, s: number) => { seen.push([node, outcome]); seconds.push(s) } }
  const { chain: client, sim } = await startChain(t, { observer, timeoutMs: 300, maxResponseBytes: LIMIT })
  await client.get(NODE)
  sim.fail(NODE, 5, 'not found')
  await t.rejects(client.get(NODE), ChainStatusError)
  sim.clearFaults()
  sim.raw(NODE, 200, 'not json')
  await t.rejects(client.get(NODE), ChainBadAnswerError)
  sim.clearFaults()
  sim.huge(NODE, 4 * LIMIT)
  await t.rejects(client.get(NODE), ChainAnswerTooLargeError)
  sim.clearFaults()
  sim.raw(NODE, 502, '<html>Bad Gateway</html>')
  await t.rejects(client.get(NODE), ChainUnavailableError)
  sim.clearFaults()
  sim.hang(NODE)
  await t.rejects(client.get(NODE), ChainTimeoutError)
  const aborted = client.probe(NODE, 5000)
  await until(() => client.inFlight === 1, 'the probe on the chain')
  client.abortAll()
  await t.rejects(aborted, ChainUnavailableError)
  t.same(seen, [[1, 'ok'], [1, 'gateway_error'], [1, 'bad_answer'], [1, 'too_large'], [1, 'unavailable'], [1, 'timeout'], [1, 'aborted']])
  t.ok(seconds.every((s) => s >= 0 && s < 5), 'durations in seconds')
  t.ok((seconds[5] as number) >= 0.25, `the timeout took its 300 ms (${seconds[5]} s)`)
})

t.test('an error answer\'s height header counts for nothing (review A14); a 2xx answer\'s does', async (t) => {
  const { chain: client, sim } = await startChain(t)
  sim.fail(NODE, 5, 'not found', 404, { 'grpc-metadata-x-cosmos-block-height': '1000000000' })
  await t.rejects(client.get(NODE), ChainStatusError)
  sim.clearFaults()
  sim.raw(NODE, 502, '<html>bad gateway</html>', { 'grpc-metadata-x-cosmos-block-height': '1000000000' })
  await t.rejects(client.get(NODE), ChainUnavailableError)
  t.equal(client.heads.best, 0, 'no head from either: not even a first one')
  sim.clearFaults()
  await client.get(NODE)
  t.equal(client.heads.best, sim.head, 'the 2xx answer\'s height counted')
})
