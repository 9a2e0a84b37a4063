import t, { type Test } from 'tap'
import { ChainClient, type ChainClientOptions } from '../../src/chain/client.js'
import { NODE_INFO_PATH } from '../../src/chain/paths.js'
import type { ChainObserver, ChainOutcome, ChainTrace, ChainTracer } from '../../src/chain/types.js'
import { readBlock, readValidatorSet } from '../../src/chain/consensus.js'
import { BURST, type HedgeResult, type HedgeSkip } from '../../src/chain/hedging.js'
import { OVERTAKEN_DEMOTES_MS, type NodeLog } from '../../src/chain/nodes.js'
import { ChainStatusError, ChainUnavailableError } from '../../src/errors.js'
import { NO_CLIENT } from '../../src/fair-queue.js'
import { startChainSimulator, type ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { SIGNED_BASE } from '../../harness/chain-simulator/data/commits.js'
import { EPOCH_INFO } from '../../harness/chain-simulator/data/epochs.js'
import { ManualClock } from '../fixtures/manual-clock.js'
import { CLIENT, OtlpReceiver } from '../fixtures/otlp-receiver.js'
import { startTracedService } from '../fixtures/traced-service.js'
import { until } from '../../harness/wait.js'

// Hedged chain reads (docs/hedged-reads.md) against real chain simulators. The hedge delay and
// the budget's window run on a ManualClock: a hedge goes exactly when the test moves the clock
// past its delay, however loaded the machine; the sockets and the answers are real.

const READ = '/productscience/inference/inference/epoch_info'
// The ceiling of a node's delay while its latency is unknown (MAX_HEDGE_DELAY_MS).
const UNKNOWN_DELAY = 1000

/** What the client tells its observer, its tracer and its log. */
class Recorder {
  readonly exchanges: Array<[number, ChainOutcome]> = []
  readonly hedges: HedgeResult[] = []
  readonly skipped: HedgeSkip[] = []
  readonly attempts: Array<{ node: number, attempt: number, hedge: boolean }> = []
  /** The trace handed to each traced exchange. */
  readonly traces: ChainTrace[] = []
  readonly lines: Array<Record<string, unknown>> = []
  readonly log: NodeLog = {
    info: (fields, msg) => { this.lines.push({ msg, ...fields }) },
    warn: (fields, msg) => { this.lines.push({ msg, ...fields }) }
  }

  readonly observer: ChainObserver = {
    exchange: (node, outcome) => { this.exchanges.push([node, outcome]) },
    hedged: (result) => { this.hedges.push(result) },
    hedgeSkipped: (reason) => { this.skipped.push(reason) }
  }

  readonly tracer: ChainTracer = {
    exchange: (trace, node, _path, attempt, hedge) => {
      this.attempts.push({ node, attempt, hedge: hedge === true })
      this.traces.push(trace)
      return { headers: {}, end: () => {} }
    }
  }

  /** Exchanges with node `node` (1-based) that ended `outcome`. */
  count (node: number, outcome: ChainOutcome): number {
    return this.exchanges.filter(([n, o]) => n === node && o === outcome).length
  }
}

interface Pair {
  readonly a: ChainSimulator
  readonly b: ChainSimulator
  readonly client: ChainClient
  readonly clock: ManualClock
  readonly seen: Recorder
}

async function hedgedPair (t: Test, options: Partial<ChainClientOptions> = {}, nodes = 2): Promise<Pair> {
  const sims = await Promise.all(Array.from({ length: nodes }, async () => startChainSimulator()))
  const clock = new ManualClock()
  const seen = new Recorder()
  const client = new ChainClient({
    baseUrl: sims.map((s) => s.url),
    timeoutMs: 10_000,
    concurrency: 64,
    coalesce: false,
    clock,
    observer: seen.observer,
    tracer: seen.tracer,
    log: seen.log,
    hedging: { budget: 0.1, minDelayMs: 50 },
    ...options
  })
  t.teardown(async () => {
    client.abortAll()
    await client.close()
    await Promise.all(sims.map(async (s) => s.close()))
  })
  return { a: sims[0] as ChainSimulator, b: sims[1] as ChainSimulator, client, clock, seen }
}

let serial = 0
/** A request's trace, as src/tracing/ would give the client: every read of these cases carries it. */
const REQUEST: ChainTrace = { request: 1 }
/** Each read distinct (a query the simulator ignores), so none is coalesced away. */
const read = async (client: ChainClient, height?: number): Promise<unknown> => client.get(READ, { n: String(++serial) }, height, { trace: REQUEST, client: NO_CLIENT })

const sleep = async (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

t.test('a node that does not answer: after its delay the read goes to the other node, whose answer wins; the first attempt is aborted', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t)
  a.hang(READ)
  const answer = read(client)
  await until(() => a.count(READ) === 1, 'the read reaches node 1')
  await clock.advance(UNKNOWN_DELAY - 1)
  t.equal(b.count(READ), 0, 'no hedge before the delay (a node whose latency is not known yet: the ceiling)')
  await clock.advance(1)
  t.same(await answer, EPOCH_INFO, 'the hedge answered')
  t.equal(b.count(READ), 1)
  await until(() => a.aborted.length === 1, 'node 1 sees its request abandoned')
  t.match(a.aborted, [new RegExp(`^${READ}`)], 'node 1 saw the client give up on its request')
  t.same(seen.hedges, ['won'])
  t.same(seen.attempts, [{ node: 1, attempt: 1, hedge: false }, { node: 2, attempt: 2, hedge: true }], 'the hedge is an attempt of its own (its own span), marked as a hedge')
  t.ok(seen.traces.length === 2 && seen.traces.every((trace) => trace === REQUEST), 'both attempts carry the read\'s trace')
  await until(() => seen.exchanges.length === 2, 'the abandoned exchange is reported')
  t.same(seen.exchanges, [[2, 'ok'], [1, 'abandoned']])
  t.same(client.nodesUp, [true, true], 'once overtaken is no sign of a node that hangs')
  t.equal(clock.pending, 0, 'no timer left behind')
})

t.test('the delay follows the node\'s latency: a node known to be fast is hedged after the floor', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t)
  // Answers on the manual clock take 0 ms: its p95 is below the floor.
  for (let i = 0; i < 20; i++) await read(client)
  t.equal(a.count(READ), 20, 'an idle service reads node 1')
  a.hang(READ)
  const answer = read(client)
  await until(() => a.count(READ) === 21, 'the read reaches node 1')
  await clock.advance(49)
  t.equal(b.count(READ), 0)
  await clock.advance(1)
  t.same(await answer, EPOCH_INFO)
  t.same(seen.hedges, ['won'])
})

t.test('both attempts of a pinned read ask the same height', async (t) => {
  const { a, b, client, clock } = await hedgedPair(t)
  a.hang(READ)
  const height = a.head - 3
  const answer = read(client, height)
  await until(() => a.count(READ) === 1, 'the read reaches node 1')
  await clock.advance(UNKNOWN_DELAY)
  t.same(await answer, { ...EPOCH_INFO, block_height: String(height) }, 'the hedge answered, at that height')
  t.same([a.askedHeights, b.askedHeights], [[height], [height]], 'x-cosmos-block-height is the same on both')
  t.same(b.answeredHeights, [height])
})

t.test('a node a hedge overtook is tried after the other for 10 s, then first again', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t)
  a.hang(READ)
  const answer = read(client)
  await until(() => a.count(READ) === 1, 'the read reaches node 1')
  await clock.advance(UNKNOWN_DELAY)
  t.same(await answer, EPOCH_INFO, 'the hedge answered')
  await until(() => seen.count(1, 'abandoned') === 1, 'node 1\'s attempt abandoned')
  a.clearFaults()
  for (let i = 0; i < 3; i++) t.same(await read(client), EPOCH_INFO)
  t.equal(a.count(READ), 1, 'idle again, node 1 still waits behind node 2: no read waited for it')
  t.equal(b.count(READ), 4)
  // Overtaken when the clock stood at the hedge's delay.
  await clock.advance(OVERTAKEN_DEMOTES_MS - 1)
  await read(client)
  t.equal(a.count(READ), 1, 'not before its 10 s are up')
  await clock.advance(1)
  await read(client)
  t.equal(a.count(READ), 2, 'then the first configured node again')
  t.same(seen.hedges, ['won'])
  t.same(client.nodesUp, [true, true], 'overtaken once: slow, not down')
})

t.test('a node that hangs: overtaken three times in a row, it is skipped as down; no read waits for it then', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t)
  a.hang(READ)
  for (let i = 1; i <= 3; i++) {
    const answer = read(client)
    await until(() => a.count(READ) === i, 'the read reaches node 1')
    await clock.advance(UNKNOWN_DELAY)
    t.same(await answer, EPOCH_INFO, `read ${i}: the hedge answered`)
    await until(() => seen.count(1, 'abandoned') === i, 'node 1\'s attempt abandoned')
    // Each overtake puts node 1 behind node 2 for a while: the next read to reach it comes after.
    await clock.advance(OVERTAKEN_DEMOTES_MS)
  }
  t.same(seen.hedges, ['won', 'won', 'won'], `the burst of ${BURST} lets a quiet replica hedge them`)
  t.same(client.nodesUp, [false, true])
  t.match(seen.lines, [{ msg: 'chain node down', reason: 'overtaken by hedges 3 times in a row without answering' }])
  t.same(await read(client), EPOCH_INFO)
  t.equal(a.count(READ), 3, 'the next read went straight to node 2')
  t.equal(b.count(READ), 4)
})

t.test('an answer between two overtakes resets the count', async (t) => {
  // A budget that lets all four hedges of six reads go.
  const { a, client, clock, seen } = await hedgedPair(t, { hedging: { budget: 0.5, minDelayMs: 50 } })
  for (let round = 0; round < 2; round++) {
    a.hang(READ)
    for (let i = 0; i < 2; i++) {
      const answer = read(client)
      await until(() => a.requests.length === 1, 'the read reaches node 1')
      await clock.advance(UNKNOWN_DELAY)
      await answer
      await until(() => seen.count(1, 'abandoned') === 2 * round + i + 1, 'node 1\'s attempt abandoned')
      a.resetCounts()
      await clock.advance(OVERTAKEN_DEMOTES_MS)
    }
    a.clearFaults()
    await read(client)
    t.equal(a.requests.length, 1, 'the answer came from node 1')
    a.resetCounts()
  }
  t.same(seen.hedges, ['won', 'won', 'won', 'won'])
  t.same(client.nodesUp, [true, true], 'never three in a row')
})

t.test('a single node is never hedged: no hedge timer at all', async (t) => {
  const { a, client, clock, seen } = await hedgedPair(t, { hedging: { budget: 0.5, minDelayMs: 50 } }, 1)
  a.hang(READ)
  const answer = read(client)
  await until(() => a.count(READ) === 1, 'the read reaches the node')
  t.equal(clock.pending, 0)
  await clock.advance(60_000)
  a.clearFaults()
  await t.rejects(answer, ChainUnavailableError)
  t.same([seen.hedges, seen.skipped, a.count(READ)], [[], [], 1])
})

t.test('without hedging settings (or a budget of 0) nothing is hedged', async (t) => {
  for (const hedging of [undefined, { budget: 0, minDelayMs: 50 }]) {
    const { a, b, client, clock } = await hedgedPair(t, { hedging })
    a.hang(READ)
    const answer = read(client)
    await until(() => a.count(READ) === 1, 'the read reaches node 1')
    t.equal(clock.pending, 0)
    a.clearFaults()
    t.same(await answer, EPOCH_INFO, 'node 1 dropped it: failover as always')
    t.equal(b.count(READ), 1)
  }
})

t.test('the optional verify routes\' heavy reads (blocks, validator sets) are never hedged; failover stays', async (t) => {
  const height = BigInt(SIGNED_BASE + 2)
  const heavy = [async (c: ChainClient) => readBlock(c, height), async (c: ChainClient) => readValidatorSet(c, height)]
  for (const heavyRead of heavy) {
    const { a, b, client, clock, seen } = await hedgedPair(t)
    a.hang('/cosmos/base/tendermint/v1beta1/')
    const answer = heavyRead(client)
    await until(() => a.count('/cosmos/base/tendermint/v1beta1/') === 1, 'the read reaches node 1')
    t.equal(clock.pending, 0, 'no hedge timer')
    await clock.advance(60_000)
    t.equal(b.count(), 0)
    a.clearFaults()
    t.ok(await answer, 'node 1 dropped it: failover to node 2')
    t.same(seen.hedges, [])
  }
})

t.test('no hedge while the replica sheds', async (t) => {
  let shedding = true
  const { a, b, client, clock, seen } = await hedgedPair(t, { hedging: { budget: 0.1, minDelayMs: 50, shedding: () => shedding } })
  a.hang(READ)
  const answer = read(client)
  await until(() => a.count(READ) === 1, 'the read reaches node 1')
  await clock.advance(UNKNOWN_DELAY * 5)
  t.same([seen.skipped, b.count(READ)], [['overload'], 0], 'due, skipped for overload')
  shedding = false
  a.clearFaults()
  t.same(await answer, EPOCH_INFO, 'failover as always')
})

t.test('no hedge while the chain queue is more than half full; one while it is half full', async (t) => {
  for (const [queueLimit, sent] of [[2, false], [4, true]] as const) {
    const { a, b, client, clock, seen } = await hedgedPair(t, { concurrency: 1, queueLimit })
    a.hang(READ)
    const reads = [read(client), read(client), read(client)]
    await until(() => a.count(READ) === 1, 'the first read reaches node 1')
    t.equal(client.queued, 2, `two reads wait (queue of ${queueLimit})`)
    await clock.advance(UNKNOWN_DELAY)
    if (sent) {
      await until(() => seen.hedges.length === 1, 'the hedge answers')
      t.same([seen.hedges, seen.skipped, b.count(READ) >= 1], [['won'], [], true], `queue of ${queueLimit}: 2 waiting is half full: hedged`)
    } else {
      t.same([seen.skipped, b.count(READ)], [['overload'], 0], `queue of ${queueLimit}: 2 waiting is more than half: not hedged`)
    }
    a.clearFaults()
    await Promise.allSettled(reads)
    client.abortAll()
  }
})

t.test('the budget: at most its share of the window\'s reads (and the burst), the rest skipped', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t)
  a.hang(READ)
  const reads = Array.from({ length: 50 }, async () => read(client))
  // Every read picks its node before any answers: they alternate, node 1 first.
  await until(() => a.count(READ) + b.count(READ) === 50, 'all reach a node')
  t.equal(a.count(READ), 25)
  await clock.advance(UNKNOWN_DELAY)
  const hedges = Math.floor(0.1 * 50 + BURST)
  await until(() => seen.hedges.length === hedges, 'the hedges answered')
  t.same([seen.skipped.length, new Set(seen.skipped)], [25 - hedges, new Set(['budget'])], 'the other due hedges skipped for the budget')
  t.equal(b.count(READ), 25 + hedges, `${hedges} extra requests for 50 reads`)
  a.clearFaults()
  const results = await Promise.allSettled(reads)
  t.same(results.filter((r) => r.status === 'rejected'), [], 'the unhedged ones failed over when node 1 dropped them')
})

t.test('identical concurrent reads share one upstream read and one hedge', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t, { coalesce: true })
  a.hang(READ)
  const reads = Array.from({ length: 5 }, async () => client.get(READ))
  await until(() => a.count(READ) === 1, 'the read reaches node 1')
  await clock.advance(UNKNOWN_DELAY)
  t.same(await Promise.all(reads), Array.from({ length: 5 }, () => EPOCH_INFO))
  t.same([a.count(READ), b.count(READ), seen.hedges], [1, 1, ['won']])
})

t.test('an unhedged read carries its trace to its one attempt, and is never hedged', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t)
  a.latency(100, READ)
  const answer = client.unhedged({ trace: REQUEST, client: NO_CLIENT }).get(READ)
  await until(() => a.count(READ) === 1, 'the read reaches node 1')
  await clock.advance(UNKNOWN_DELAY)
  t.same(await answer, EPOCH_INFO)
  t.equal(b.count(READ), 0, 'no hedge, past the delay')
  t.same(seen.attempts, [{ node: 1, attempt: 1, hedge: false }])
  t.same(seen.traces, [REQUEST], 'traced as its request\'s')
})

t.test('an unhedged read never joins a hedged one', async (t) => {
  const { a, b, client } = await hedgedPair(t, { coalesce: true })
  const answers = await Promise.all([client.get(READ), client.unhedged().get(READ), client.get(READ), client.unhedged().get(READ)])
  t.same(answers, Array.from({ length: 4 }, () => EPOCH_INFO))
  t.equal(a.count(READ) + b.count(READ), 2, 'two upstream reads: the hedged ones shared one, the unhedged ones another')
})

t.test('the first attempt answers while the hedge waits: the hedge is abandoned (lost)', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t)
  // Node 1 answers 2 s late (real time), long after the manual clock sends the hedge.
  a.latency(2000, READ)
  b.hang(READ)
  const answer = read(client)
  await until(() => a.count(READ) === 1, 'the read reaches node 1')
  await clock.advance(UNKNOWN_DELAY)
  await until(() => b.count(READ) === 1, 'the hedge reaches node 2')
  t.same(await answer, EPOCH_INFO)
  t.same(seen.hedges, ['lost'])
  await until(() => b.aborted.length === 1, 'node 2 sees the hedge abandoned')
})

t.test('a first attempt that fails while the hedge runs leaves the read to the hedge', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t)
  a.hang(READ)
  b.hang(READ)
  const answer = read(client)
  await until(() => a.count(READ) === 1, 'the read reaches node 1')
  await clock.advance(UNKNOWN_DELAY)
  await until(() => b.count(READ) === 1, 'the hedge reaches node 2')
  a.clearFaults() // node 1 drops its request
  await sleep(50)
  // Released: node 2's hung request is dropped too, and node 1 (tried) is not asked again.
  t.equal(a.count(READ), 1, 'node 1 not asked again while the hedge runs')
  b.clearFaults()
  await t.rejects(answer, ChainUnavailableError, 'both dropped it: no node left')
  t.same(seen.hedges, ['failed'])
})

t.test('a gateway error is an answer: it ends the read, the other attempt is aborted', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t)
  a.hang(READ)
  b.fail(READ, 5, 'not found', 404)
  const answer = read(client)
  await until(() => a.count(READ) === 1, 'the read reaches node 1')
  await clock.advance(UNKNOWN_DELAY)
  await t.rejects(answer, ChainStatusError)
  t.same(seen.hedges, ['failed'])
  await until(() => a.aborted.length === 1, 'node 1 sees its request abandoned')
})

t.test('a first node that refuses fails over at once, without waiting for a hedge', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t)
  a.drop(READ)
  t.same(await read(client), EPOCH_INFO)
  t.same([a.count(READ), b.count(READ), seen.hedges, seen.skipped], [1, 1, [], []])
  t.equal(clock.pending, 1, 'only node 1\'s probe is pending: the hedge timer was cancelled')
  b.drop(READ)
  await t.rejects(read(client), ChainUnavailableError, 'every node dropped it')
})

t.test('no hedge to a node that is down, nor when no other node may serve the read', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t)
  // Two reads at once: node 2 takes one, refuses it, and is skipped as down.
  await b.refuse()
  await Promise.all([read(client), read(client)])
  t.same(client.nodesUp, [true, false])
  a.hang(READ)
  const answer = read(client)
  await until(() => a.count(READ) === 3, 'the read reaches node 1')
  await clock.advance(UNKNOWN_DELAY)
  t.same(seen.skipped, ['no_node'])
  await b.restore()
  a.clearFaults()
  t.same(await answer, EPOCH_INFO, 'failover to node 2 once node 1 dropped it')
})

t.test('no hedge to a node that lags, for a latest-state read', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t, { maxNodeLag: 2 })
  b.lag = 10
  await client.heads.latest()
  t.equal(client.heads.lagging(1), true)
  a.hang(READ)
  const answer = client.readLatest(READ)
  await until(() => a.count(READ) === 1, 'the read reaches node 1')
  await clock.advance(UNKNOWN_DELAY)
  t.same([seen.skipped, b.count(READ)], [['no_node'], 0])
  a.clearFaults()
  await t.rejects(answer, ChainUnavailableError)
})

t.test('no hedge for a read that is being aborted (shutdown)', async (t) => {
  const { a, b, client, clock, seen } = await hedgedPair(t)
  a.hang(READ)
  const answer = read(client).catch((err: unknown) => err)
  await until(() => a.count(READ) === 1, 'the read reaches node 1')
  client.abortAll()
  await clock.advance(UNKNOWN_DELAY)
  t.type(await answer, ChainUnavailableError)
  t.same([seen.hedges, seen.skipped, b.count(READ)], [[], [], 0])
})

t.test('the service: a node that hangs costs no client an error and none the chain timeout; hedges are counted and traced', async (t) => {
  const [a, b] = [await startChainSimulator(), await startChainSimulator()]
  t.teardown(async () => { await a.close(); await b.close() })
  const receiver = await OtlpReceiver.http()
  t.teardown(async () => receiver.close())
  const { origin, service } = await startTracedService(t, [a.url, b.url], receiver, { EDGE_API_CHAIN_TIMEOUT: '5s' })
  a.hang(NODE_INFO_PATH)
  const answers: Array<[number, number]> = []
  for (let i = 0; i < 6; i++) {
    const sent = performance.now()
    const res = await fetch(`${origin}/v1/versions`)
    await res.arrayBuffer()
    answers.push([res.status, performance.now() - sent])
  }
  t.same(answers.map(([status]) => status), [200, 200, 200, 200, 200, 200], '0 client errors')
  t.ok(answers.every(([, took]) => took < 5000), `none waited for the 5 s chain timeout (${answers.map(([, took]) => Math.round(took)).join(', ')} ms)`)
  t.equal(a.count(NODE_INFO_PATH), 1, 'once overtaken, node 1 waits behind node 2: only the first request waited for a hedge')
  const metrics = await service.metrics?.scrape() as string
  t.match(metrics, /edge_api_chain_hedges_total\{result="won"\} 1\n/)
  const spans = await receiver.waitFor((s) => s.some((span) => span.attributes['edge_api.chain.hedge'] === true), 'a hedge span')
  const hedge = spans.find((span) => span.attributes['edge_api.chain.hedge'] === true)
  t.match(hedge, { kind: CLIENT, attributes: { 'edge_api.chain.node': 2, 'edge_api.chain.attempt': 2, 'edge_api.chain.outcome': 'ok' } }, 'the hedge: a client span of its own')
  const first = await receiver.waitFor((s) => s.some((span) => span.attributes['edge_api.chain.outcome'] === 'abandoned'), 'the abandoned attempt\'s span')
  t.match(first.find((span) => span.attributes['edge_api.chain.outcome'] === 'abandoned'), { kind: CLIENT, attributes: { 'edge_api.chain.node': 1, 'edge_api.chain.attempt': 1 } })
})
