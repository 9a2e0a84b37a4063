import t from 'tap'
import { ChainAnswerTooLargeError, ChainBadAnswerError, ChainStatusError, ChainTimeoutError, ChainUnavailableError } from '../src/errors.js'
import { ChainClient } from '../src/chain/client.js'
import { PROBE_PATH, Readiness, type ChainProber } from '../src/readiness.js'
import { startChainSimulator } from '../harness/chain-simulator/simulator.js'
import { startChain } from './fixtures/chain.js'
import { ManualClock } from './fixtures/manual-clock.js'

/** A prober whose answers the test settles by hand, counting every probe. */
function manualProber (nodeCount?: number) {
  const calls: Array<{ path: string, timeoutMs: number, node: number, resolve: (v: unknown) => void, reject: (e: unknown) => void }> = []
  const prober: ChainProber = {
    nodeCount,
    probe: (path, timeoutMs, node) => new Promise((resolve, reject) => { calls.push({ path, timeoutMs, node, resolve, reject }) })
  }
  return { prober, calls }
}

/** Lets pending promise callbacks run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

t.test('probes node_info under its own 2 s budget and answers ready', async (t) => {
  const { prober, calls } = manualProber()
  const readiness = new Readiness(prober)
  const answer = readiness.check()
  t.equal(calls.length, 1)
  t.equal(calls[0]?.path, PROBE_PATH)
  t.equal(calls[0]?.timeoutMs, 2000)
  calls[0]?.resolve({})
  t.same(await answer, { status: 'ready' })
})

for (const n of [8, 500]) {
  t.test(`${n} concurrent checks over an empty cache share exactly one probe`, async (t) => {
    const { prober, calls } = manualProber()
    const readiness = new Readiness(prober)
    const answers = Array.from({ length: n }, () => readiness.check())
    t.equal(calls.length, 1, 'one probe in flight')
    calls[0]?.resolve({})
    const all = await Promise.all(answers)
    t.ok(all.every((a) => a.status === 'ready'), 'every check answered ready')
    await readiness.check()
    t.equal(calls.length, 1, 'and the next check is served from the cache')
  })
}

t.test('caches the result, failure included, for 3 s', async (t) => {
  const clock = new ManualClock(1000)
  const { prober, calls } = manualProber()
  const readiness = new Readiness(prober, { clock })
  const first = readiness.check()
  calls[0]?.reject(new ChainUnavailableError(new Error('connect ECONNREFUSED 10.0.0.7:1317')))
  const failed = { status: 'not ready', reason: 'chain unreachable', error: 'chain unavailable' }
  t.same(await first, failed, 'no internal address in the answer')
  await clock.advance(2999)
  t.same(await readiness.check(), failed, 'the failure is cached')
  t.equal(calls.length, 1, 'no second probe within the cache period')
  await clock.advance(1)
  const third = readiness.check()
  t.equal(calls.length, 2, 'the cache expired after 3 s: one new probe')
  calls[1]?.resolve({})
  t.same(await third, { status: 'ready' }, 'recovery is seen within one cache period')
})

t.test('the cache period counts from when the answer arrived', async (t) => {
  const clock = new ManualClock(0)
  const { prober, calls } = manualProber()
  const readiness = new Readiness(prober, { clock, cacheMs: 100 })
  const first = readiness.check()
  await clock.advance(500)
  calls[0]?.resolve({})
  await first
  await clock.advance(99)
  await readiness.check()
  t.equal(calls.length, 1)
})

t.test('says why the chain is unreachable without leaking internals', async (t) => {
  const cases: Array<[unknown, string]> = [
    [new ChainTimeoutError(2000), 'no answer within 2s'],
    [new ChainStatusError(14, 'node is catching up'), 'chain answered gRPC code 14: node is catching up'],
    [new ChainUnavailableError('chain answered 502 without a gateway error body for /cosmos/x'), 'chain unavailable'],
    [new ChainBadAnswerError('chain answered 200 with a body that is not JSON for http://10.0.0.7:1317/cosmos/base/tendermint/v1beta1/node_info'), 'chain answered with a body that is not JSON'],
    [new ChainAnswerTooLargeError(65536, 'http://10.0.0.7:1317 answered more'), 'chain answer too large'],
    [new Error('something at http://10.0.0.7:1317 broke'), 'chain probe failed']
  ]
  for (const [err, error] of cases) {
    const readiness = new Readiness({ probe: async () => { throw err } })
    t.same(await readiness.check(), { status: 'not ready', reason: 'chain unreachable', error })
  }
})

t.test('draining answers at once, without probing the chain, and latches', async (t) => {
  const { prober, calls } = manualProber()
  const readiness = new Readiness(prober)
  t.equal(readiness.draining, false)
  readiness.beginDrain()
  t.equal(readiness.draining, true)
  for (let i = 0; i < 3; i++) t.same(await readiness.check(), { status: 'not ready', reason: 'draining' })
  t.equal(calls.length, 0, 'no chain request while draining')
})

t.test('a drain that starts during a successful probe still answers draining', async (t) => {
  const { prober, calls } = manualProber()
  const readiness = new Readiness(prober)
  const answers = [readiness.check(), readiness.check()]
  await settle()
  readiness.beginDrain()
  calls[0]?.resolve({})
  t.same(await Promise.all(answers), [
    { status: 'not ready', reason: 'draining' },
    { status: 'not ready', reason: 'draining' }
  ], 'the latch wins over the probe that succeeded')
})

t.test('a hanging chain is answered at ~2 s, then from the cache in < 100 ms', async (t) => {
  // The node goes down with the failed probe; its own re-admission probes come later.
  const { sim, chain } = await startChain(t, { timeoutMs: 30_000, concurrency: 4, nodeBackoff: { initialMs: 60_000, maxMs: 60_000 } })
  sim.hang(PROBE_PATH)
  const readiness = new Readiness(chain)
  let start = performance.now()
  const answer = await readiness.check()
  const took = performance.now() - start
  t.same(answer, { status: 'not ready', reason: 'chain unreachable', error: 'no answer within 2s' })
  t.ok(took >= 1900 && took <= 2200, `answered in ${Math.round(took)} ms (own 2 s budget, not the 30 s chain timeout)`)
  start = performance.now()
  t.same(await readiness.check(), answer, 'the cached failure')
  const cached = performance.now() - start
  t.ok(cached < 100, `cached answer in ${cached.toFixed(2)} ms`)
  t.equal(sim.count(PROBE_PATH), 1, 'one chain request')
})

t.test('several nodes: each has its own single-flight probe, and one ready node is enough', async (t) => {
  const { prober, calls } = manualProber(2)
  const readiness = new Readiness(prober)
  const answers = Array.from({ length: 50 }, () => readiness.check())
  t.same(calls.map((c) => c.node), [0, 1], 'one probe per node for 50 concurrent checks')
  calls[1]?.resolve({})
  t.same(await Promise.all(answers), Array(50).fill({ status: 'ready' }), 'ready as soon as node 2 answered, node 1 still probing')
  calls[0]?.reject(new ChainUnavailableError(new Error('connect ECONNREFUSED 10.0.0.7:1317')))
  await settle()
  t.same(await readiness.check(), { status: 'ready' }, 'from the cache')
  t.equal(calls.length, 2, 'no probe within the cache period')
})

t.test('several nodes: not ready once every probe failed, saying why for each node by number', async (t) => {
  const clock = new ManualClock(0)
  const { prober, calls } = manualProber(2)
  const readiness = new Readiness(prober, { clock })
  const answer = readiness.check()
  calls[1]?.reject(new ChainTimeoutError(2000))
  calls[0]?.reject(new ChainUnavailableError(new Error('connect ECONNREFUSED 10.0.0.7:1317')))
  const failed = { status: 'not ready', reason: 'chain unreachable', error: 'node 1: chain unavailable; node 2: no answer within 2s' }
  t.same(await answer, failed)
  t.same(await readiness.check(), failed, 'cached')
  await clock.advance(3000)
  const next = readiness.check()
  t.equal(calls.length, 4, 'both probed again after the cache period')
  calls[2]?.resolve({})
  t.same(await next, { status: 'ready' })
})

t.test('several real nodes: ready while one answers, not ready when none does', async (t) => {
  const [a, b] = await Promise.all([startChainSimulator(), startChainSimulator()])
  const chain = new ChainClient({ baseUrl: [a.url, b.url], timeoutMs: 5000, concurrency: 4 })
  t.teardown(async () => {
    await chain.close()
    await Promise.all([a.close(), b.close()])
  })
  t.equal(chain.nodeCount, 2)
  const clock = new ManualClock(0)
  const readiness = new Readiness(chain, { clock })
  await a.refuse()
  t.same(await readiness.check(), { status: 'ready' }, 'node 1 refuses, node 2 answers')
  await b.refuse()
  await clock.advance(3000)
  t.same(await readiness.check(), { status: 'not ready', reason: 'chain unreachable', error: 'node 1: chain unavailable; node 2: chain unavailable' })
  await a.restore()
  await clock.advance(3000)
  t.same(await readiness.check(), { status: 'ready' }, 'node 1 is back')
})

t.test('onProbe is told each probe\'s result, not the cached answers', async (t) => {
  const { prober, calls } = manualProber(2)
  const results: string[] = []
  const clock = new ManualClock(0)
  const readiness = new Readiness(prober, { onProbe: (result) => results.push(result), clock })
  const first = readiness.check()
  calls[0]?.resolve({})
  calls[1]?.reject(new ChainTimeoutError(2000))
  await first
  await settle()
  await readiness.check()
  t.same(results.sort(), ['ok', 'timeout'], 'one result per probe; the cached answer probes nothing')
  await clock.advance(10_000)
  const second = readiness.check()
  calls[2]?.reject(new ChainStatusError(14, 'unavailable'))
  calls[3]?.reject(new ChainUnavailableError('refused'))
  await second
  t.same(results.slice(2).sort(), ['gateway_error', 'unavailable'])
})

t.test('strict verification: not ready while the verified height does not do, before any probe; ready once it does', async (t) => {
  const { prober, calls } = manualProber()
  let reason: string | undefined = 'no verified height yet'
  const readiness = new Readiness(prober, { unverified: () => reason })
  t.same(await readiness.check(), { status: 'not ready', reason: 'not verified', error: 'no verified height yet' })
  t.equal(calls.length, 0, 'the chain is not probed')
  reason = undefined
  const answer = readiness.check()
  calls[0]?.resolve({})
  t.same(await answer, { status: 'ready' })
  readiness.beginDrain()
  reason = 'the trusted header has expired'
  t.same(await readiness.check(), { status: 'not ready', reason: 'draining' }, 'draining says so first')
})
