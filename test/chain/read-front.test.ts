import type { AddressInfo } from 'node:net'
import t from 'tap'
import { request } from 'undici'
import { ChainBusyError, ChainStatusError } from '../../src/errors.js'
import { buildTestApp } from '../fixtures/app.js'
import { startChain } from '../fixtures/chain.js'
import { until } from '../../harness/wait.js'
import { PARTICIPANTS, SECOND_PAGE_KEY } from '../../harness/chain-simulator/data/participants.js'

const ONE = '/productscience/inference/inference/inference_participant/'
const LIST = '/productscience/inference/inference/participants_with_balances'
const ACCOUNT = ONE + PARTICIPANTS[1].address
const NODE = '/cosmos/base/tendermint/v1beta1/node_info'

t.test('1000 concurrent identical reads make one chain request and share one parsed result', async (t) => {
  const { sim, chain: client } = await startChain(t)
  // The answer takes a while, so every read starts while the first one is in flight.
  sim.latency(50)
  const results = await Promise.all(Array.from({ length: 1000 }, () => client.get(ACCOUNT)))
  t.equal(sim.count(), 1, 'one chain request')
  t.same(results[0], { pubkey: 'Au5ZQav3E36PZpGta2xUa8r9xEEo9Biph3fG5i3qaeSG', balance: '9223372036854775807', denom: 'ngonka' })
  t.ok(results.every((r) => r === results[0]), 'one parsed object for all')
})

t.test('1000 concurrent identical client requests through the app make one chain request', async (t) => {
  const { app, sim } = await buildTestApp(t)
  sim.latency(300)
  const responses = await Promise.all(Array.from({ length: 1000 }, () => app.inject(`/v1/participants/${PARTICIPANTS[1].address}`)))
  t.equal(sim.count(ONE), 1)
  t.ok(responses.every((res) => res.statusCode === 200), 'every client got 200')
  t.ok(responses.every((res) => /"balance":9223372036854775807,/.test(res.body)), 'with the exact 64-bit balance')
})

t.test('reads that differ only in their query string are never coalesced', async (t) => {
  const { sim, chain: client } = await startChain(t)
  sim.latency(50)
  const [first, second, plain, again] = await Promise.all([
    client.get(LIST, { 'pagination.limit': '1000' }),
    client.get(LIST, { 'pagination.limit': '1000', 'pagination.key': SECOND_PAGE_KEY }),
    client.get(LIST),
    client.get(LIST, { 'pagination.limit': '1000' })
  ]) as Array<{ block_height: string }>
  t.equal(sim.count(LIST), 3, 'three distinct query strings, three chain requests; the repeated one is shared')
  t.same(sim.requests.toSorted(), [
    LIST,
    `${LIST}?pagination.limit=1000`,
    `${LIST}?pagination.limit=1000&pagination.key=%2B%2F%2B%2FAQ%3D%3D`
  ].toSorted())
  t.equal(first?.block_height, '1843210')
  t.equal(second?.block_height, '1843211', 'the second page got its own answer')
  t.equal(plain?.block_height, '1843210')
  t.equal(again, first, 'the identical read shared the first one')
})

t.test('different paths are never coalesced', async (t) => {
  const { sim, chain: client } = await startChain(t)
  sim.latency(20)
  const answers = await Promise.all(PARTICIPANTS.map((p) => client.get(ONE + p.address))) as Array<{ balance: string }>
  t.equal(sim.count(ONE), PARTICIPANTS.length)
  t.same(answers.map((a) => a.balance), PARTICIPANTS.map((p) => p.balance))
})

t.test('a finished read is not reused: coalescing shares in-flight requests only, it is no cache', async (t) => {
  const { sim, chain: client } = await startChain(t)
  for (let i = 0; i < 3; i++) await client.get(ACCOUNT)
  t.equal(sim.count(), 3)
})

t.test('a failure is shared only by the reads in flight with it, never handed to a later read', async (t) => {
  const { sim, chain: client } = await startChain(t)
  sim.latency(20)
  sim.fail(ONE, 14, 'node is syncing')
  const failed = await Promise.allSettled(Array.from({ length: 5 }, () => client.get(ACCOUNT)))
  t.equal(sim.count(), 1)
  t.ok(failed.every((r) => r.status === 'rejected' && r.reason instanceof ChainStatusError && r.reason.message === 'node is syncing'))
  sim.clearFaults()
  t.match(await client.get(ACCOUNT), { balance: '9223372036854775807' }, 'the next read asks the chain again and succeeds')
  t.equal(sim.count(), 2)
})

t.test('a read shed by the full queue does not fail the identical read that is already in flight', async (t) => {
  const { sim, chain: client } = await startChain(t, { concurrency: 1, queueLimit: 1 })
  sim.latency(50)
  const inFlight = client.get(ACCOUNT)
  // Fills the one queue place (or is shed itself); either way the next other read is shed.
  const queued = client.get(ONE + PARTICIPANTS[2].address).catch(() => undefined)
  const shed = client.get(ONE + PARTICIPANTS[0].address)
  const shared = client.get(ACCOUNT)
  await t.rejects(shed, { statusCode: 503, message: 'too many chain queries in progress; retry shortly' })
  t.match(await inFlight, { balance: '9223372036854775807' })
  t.equal(await shared, await inFlight, 'the identical read shares the one in flight')
  await queued
  t.equal(sim.count(ACCOUNT), 1)
  t.equal(sim.count(ONE + PARTICIPANTS[0].address), 0, 'the shed read never reached the chain')
})

t.test('a client that hangs up does not abort the chain request another client shares', async (t) => {
  const { app, sim } = await buildTestApp(t)
  let inHandler = 0
  app.addHook('preHandler', async () => { inHandler++ })
  sim.latency(300)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/participants/${PARTICIPANTS[1].address}`
  const controller = new AbortController()
  const leaving = request(url, { signal: controller.signal })
  const staying = request(url)
  // Both requests must be in the handler, sharing the one chain request, before one leaves.
  await until(() => inHandler === 2 && sim.count(ONE) === 1, 'both requests in the handler and one chain request')
  controller.abort()
  await t.rejects(leaving, { name: 'AbortError' })
  const res = await staying
  t.equal(res.statusCode, 200)
  t.match(await res.body.text(), /"balance":9223372036854775807,/)
  t.equal(sim.count(ONE), 1)
})

t.test('with coalescing off, N concurrent identical reads make N chain requests', async (t) => {
  const { sim, chain: client } = await startChain(t, { coalesce: false })
  sim.latency(20)
  const results = await Promise.all(Array.from({ length: 50 }, () => client.get(ACCOUNT)))
  t.equal(sim.count(), 50)
  t.not(results[0], results[1], 'each read parsed its own answer')
})

t.test('with coalescing off through the app, N client requests make N chain requests', async (t) => {
  const { app, sim } = await buildTestApp(t, { chain: { coalesce: false } })
  sim.latency(50)
  const responses = await Promise.all(Array.from({ length: 50 }, () => app.inject(`/v1/participants/${PARTICIPANTS[1].address}`)))
  t.ok(responses.every((res) => res.statusCode === 200))
  t.equal(sim.count(ONE), 50)
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

t.test('identical concurrent reads share one request unless coalescing is off', async (t) => {
  const { chain: client, sim } = await startChain(t)
  sim.latency(50, NODE)
  const [a, b] = await Promise.all([client.get(NODE), client.get(NODE)])
  t.equal(a, b, 'one parsed result, shared')
  t.equal(sim.count(NODE), 1)
  await client.get(NODE)
  t.equal(sim.count(NODE), 2, 'settled requests are not cached')
})
