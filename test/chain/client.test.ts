import t from 'tap'
import { ChainClient, chainPath } from '../../src/chain/client.js'
import { ChainAnswerTooLargeError, ChainBadAnswerError, ChainBusyError, ChainStatusError, ChainTimeoutError, ChainUnavailableError } from '../../src/errors.js'
import { startChainSimulator } from '../fixtures/chain-simulator/simulator.js'
import { startChain } from '../fixtures/chain.js'
import { until } from '../fixtures/wait.js'
import { NODE_INFO } from '../fixtures/chain-simulator/data/node.js'

const NODE = '/cosmos/base/tendermint/v1beta1/node_info'

t.test('GET returns the parsed JSON of a 2xx answer', async (t) => {
  const { chain: client, sim } = await startChain(t)
  t.same(await client.get(NODE), NODE_INFO)
  t.same(sim.requests, [NODE])
})

t.test('query values are encoded; undefined ones are left out', async (t) => {
  const { chain: client, sim } = await startChain(t)
  await client.get('/productscience/inference/inference/participants_with_balances', { 'pagination.key': 'a+b/c=', skip: undefined })
  t.same(sim.requests, ['/productscience/inference/inference/participants_with_balances?pagination.key=a%2Bb%2Fc%3D'])
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

t.test('a refused connection is ChainUnavailableError', async (t) => {
  const { chain: client, sim } = await startChain(t)
  await sim.refuse()
  const error = await client.get(NODE).catch((err: unknown) => err) as ChainUnavailableError
  t.ok(error instanceof ChainUnavailableError)
  t.match((error.cause as { code?: string }).code, /ECONNREFUSED/)
})

t.test('a chain that does not answer in time is ChainTimeoutError, and its socket is freed', async (t) => {
  const { chain: client, sim } = await startChain(t, { timeoutMs: 100 })
  sim.hang(NODE)
  const started = Date.now()
  const error = await client.get(NODE).catch((err: unknown) => err) as ChainTimeoutError
  t.ok(error instanceof ChainTimeoutError)
  t.equal(error.statusCode, 504)
  t.equal(error.message, 'chain query timed out')
  t.ok(Date.now() - started < 1000, 'answered at the timeout')
  t.equal(client.inFlight, 0)
})

t.test('abortAll ends every request in flight with ChainUnavailableError', async (t) => {
  const { chain: client, sim } = await startChain(t)
  sim.hang(NODE)
  const pending = [client.get(NODE), client.get(`${NODE}?x`), client.probe(NODE, 5000)]
  await until(() => sim.count(NODE) === 3, 'three requests on the chain')
  t.equal(client.inFlight, 3)
  client.abortAll()
  const results = await Promise.allSettled(pending)
  for (const result of results) {
    t.equal(result.status, 'rejected')
    t.ok((result as PromiseRejectedResult).reason instanceof ChainUnavailableError)
  }
  t.equal(client.inFlight, 0)
})

t.test('concurrency is bounded and the wait queue too: beyond it, ChainBusyError with Retry-After', async (t) => {
  const { chain: client, sim } = await startChain(t, { concurrency: 2, queueLimit: 3, coalesce: false })
  sim.latency(150, NODE)
  const accepted = Array.from({ length: 5 }, () => client.get(NODE))
  const shed = await client.get(NODE).catch((err: unknown) => err) as ChainBusyError
  t.ok(shed instanceof ChainBusyError)
  t.equal(shed.statusCode, 503)
  t.same(shed.headers, { 'retry-after': '1' })
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(client.inFlight, 2, 'only `concurrency` requests are sent at once')
  await Promise.all(accepted)
  t.equal(sim.count(NODE), 5)
})

t.test('queueLimit 0 means no waiting: free slots are used, the next one is shed', async (t) => {
  const { chain: client, sim } = await startChain(t, { concurrency: 2, queueLimit: 0, coalesce: false })
  sim.latency(100, NODE)
  const both = [client.get(NODE), client.get(NODE)]
  await t.rejects(client.get(NODE), ChainBusyError)
  await Promise.all(both)
  t.equal(sim.count(NODE), 2)
})

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

t.test('identical concurrent reads share one request unless coalescing is off', async (t) => {
  const { chain: client, sim } = await startChain(t)
  sim.latency(50, NODE)
  const [a, b] = await Promise.all([client.get(NODE), client.get(NODE)])
  t.equal(a, b, 'one parsed result, shared')
  t.equal(sim.count(NODE), 1)
  await client.get(NODE)
  t.equal(sim.count(NODE), 2, 'settled requests are not cached')
})

t.test('chainPath percent-encodes every value as one path segment', async (t) => {
  t.equal(chainPath`/a/${'gonka1xyz'}/b/${42}/${7n}`, '/a/gonka1xyz/b/42/7')
  t.equal(chainPath`/a/${'../../x'}`, '/a/%2E%2E%2F%2E%2E%2Fx')
  t.equal(chainPath`/a/${'x?y#z@w'}`, '/a/x%3Fy%23z%40w')
  t.equal(chainPath`/a/${'.'}`, '/a/%2E')
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
