import t from 'tap'
import { REAL_CLOCK } from '../../src/clock.js'
import { Deadlines } from '../../src/chain/deadline.js'
import { ChainTimeoutError, ChainUnavailableError } from '../../src/errors.js'
import { startChain } from '../fixtures/chain.js'
import { until } from '../../harness/wait.js'

// Each chain request's deadline and abortAll (src/chain/deadline.ts), through the client over
// a real socket, then on their own.

const NODE = '/cosmos/base/tendermint/v1beta1/node_info'

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

t.test('a deadline tells a timeout from abortAll, and is forgotten when its work ends', async (t) => {
  const deadlines = new Deadlines(REAL_CLOCK)
  const timeout = await deadlines.run(20, async ({ signal, timedOut, timeoutMs }) => {
    t.equal(timeoutMs, 20)
    t.equal(deadlines.size, 1)
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
    return { reason: signal.reason as unknown, timedOut: timedOut() }
  })
  t.ok(timeout.reason instanceof ChainTimeoutError, 'aborted with the timeout')
  t.equal(timeout.timedOut, true)
  const running = deadlines.run(60_000, async ({ signal, timedOut }) => {
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
    return { reason: signal.reason as Error, timedOut: timedOut() }
  })
  deadlines.abortAll()
  const aborted = await running
  t.equal(aborted.reason.message, 'edge-api is shutting down')
  t.equal(aborted.timedOut, false, 'abortAll is not a timeout')
  t.equal(deadlines.size, 0)
  await t.rejects(deadlines.run(1000, async () => { throw new ChainUnavailableError('x') }), ChainUnavailableError, 'a failure passes through')
  t.equal(deadlines.size, 0, 'and is forgotten too')
})
