import t, { type Test } from 'tap'
import { ChainClient, type ChainClientOptions } from '../../src/chain/client.js'
import type { NodeLog } from '../../src/chain/nodes.js'
import {
  ChainAnswerTooLargeError,
  ChainBadAnswerError,
  ChainStatusError,
  ChainTimeoutError,
  ChainUnavailableError
} from '../../src/errors.js'
import { PROBE_PATH } from '../../src/readiness.js'
import { buildTestApp } from '../fixtures/app.js'
import { startChainSimulator, type ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { EPOCH_INFO } from '../../harness/chain-simulator/data/epochs.js'
import { ManualClock } from '../fixtures/manual-clock.js'
import { until } from '../../harness/wait.js'

// Several nodes of one chain (docs/chain-nodes.md). A read whose node refuses, resets or drops the
// connection is retried at once on the next node; gateway errors and timeouts are answers.

const READ = '/productscience/inference/inference/epoch_info'

interface Nodes {
  readonly a: ChainSimulator
  readonly b: ChainSimulator
  readonly client: ChainClient
  readonly lines: Array<Record<string, unknown>>
}

async function twoNodes (t: Test, options: Partial<ChainClientOptions> = {}): Promise<Nodes> {
  const [a, b] = await Promise.all([startChainSimulator(), startChainSimulator()])
  const lines: Array<Record<string, unknown>> = []
  const log: NodeLog = {
    info: (fields, msg) => { lines.push({ msg, ...fields }) },
    warn: (fields, msg) => { lines.push({ msg, ...fields }) }
  }
  const client = new ChainClient({ baseUrl: [a.url, b.url], timeoutMs: 5000, concurrency: 16, coalesce: false, log, ...options })
  t.teardown(async () => {
    client.abortAll()
    await client.close()
    await Promise.all([a.close(), b.close()])
  })
  return { a, b, client, lines }
}

/** Each read distinct (a query the simulator ignores), so none is coalesced away. */
let serial = 0
const read = (client: ChainClient): Promise<unknown> => client.get(READ, { n: String(++serial) })

async function sequential (client: ChainClient, n: number): Promise<unknown[]> {
  const failures: unknown[] = []
  for (let i = 0; i < n; i++) await read(client).catch((err: unknown) => failures.push(err))
  return failures
}

async function concurrent (client: ChainClient, n: number): Promise<unknown[]> {
  const results = await Promise.allSettled(Array.from({ length: n }, () => read(client)))
  return results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason)
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

t.test('an idle service reads from the first node; the second is a standby', async (t) => {
  const { a, b, client } = await twoNodes(t)
  t.same(await sequential(client, 10), [])
  t.same(await read(client), EPOCH_INFO)
  t.equal(a.count(READ), 11)
  t.equal(b.count(READ), 0)
})

for (const victim of ['a', 'b'] as const) {
  t.test(`node ${victim} refusing fails no read, sequential or concurrent`, async (t) => {
    const nodes = await twoNodes(t)
    const { client } = nodes
    await nodes[victim].refuse()
    t.same(await sequential(client, 20), [], '20 sequential reads')
    t.same(await concurrent(client, 100), [], '100 concurrent reads')
    const other = victim === 'a' ? nodes.b : nodes.a
    t.equal(other.count(READ), 120, 'all answered by the other node')
    if (victim === 'a') {
      t.same(nodes.lines.filter((l) => l.msg === 'chain node down').map((l) => l.node), [nodes.a.url], 'one line: node a is down')
      t.match(nodes.lines[0], { reason: /ECONNRESET/, retryInMs: 250 })
    }
  })

  t.test(`node ${victim} restarting under sequential and concurrent reads fails none, and is re-admitted`, async (t) => {
    // The backoff on a manual clock: the node is re-admitted when the test says, not after
    // however long a loaded machine takes; the phases are counted in reads, not in ms.
    const clock = new ManualClock()
    const nodes = await twoNodes(t, { concurrency: 8, clock })
    const { client } = nodes
    const target = nodes[victim]
    const run = { stop: false }
    const failures: unknown[] = []
    let reads = 0
    // One reader one read after another, and one that keeps 8 reads in flight (so the second
    // node carries reads too and both have kept-alive sockets when the restart cuts them).
    const loops = [
      (async () => { while (!run.stop) { reads++; await read(client).catch((err: unknown) => failures.push(err)) } })(),
      (async () => { while (!run.stop) { reads += 8; failures.push(...await concurrent(client, 8)) } })()
    ]
    const readsFor = async (what: string, n: number): Promise<void> => {
      const from = reads
      await until(() => reads >= from + n, what)
    }
    await readsFor('reads before the restart', 30)
    await target.refuse()
    await readsFor('reads while it is down', 30)
    await target.restore()
    // Its probe is due after the backoff (250 ms on the clock).
    await clock.advance(250)
    await until(() => nodes.lines.some((l) => l.msg === 'chain node up'), 're-admitted')
    await readsFor('reads after the restart', 30)
    run.stop = true
    await Promise.all(loops)
    t.same(failures, [], `no read of ${reads} failed`)
    const changes = nodes.lines.filter((l) => l.node === target.url).map((l) => l.msg)
    t.same(changes, ['chain node down', 'chain node up'], 'one line per state change')
    target.resetCounts()
    await sequential(client, 5)
    await concurrent(client, 20)
    t.ok(target.count(READ) > 0, 'reads reach the restarted node again')
  })
}

t.test('a node that resets the connection mid-answer, or drops it, is left for the next node at once', async (t) => {
  const { a, b, client } = await twoNodes(t, { nodeBackoff: { initialMs: 60_000, maxMs: 60_000 } })
  a.reset(READ)
  t.same(await read(client), EPOCH_INFO, 'reset mid-answer: answered by b')
  t.equal(a.count(READ), 1)
  t.equal(b.count(READ), 1)
  t.same(await concurrent(client, 20), [], 'later reads go to b')
  t.equal(a.count(READ), 1, 'a is skipped while down')
})

t.test('a dropped connection and a proxy error page count as a node that is not there', async (t) => {
  for (const fault of ['drop', 'proxy'] as const) {
    await t.test(fault, async (t) => {
      const { a, b, client } = await twoNodes(t)
      if (fault === 'drop') a.drop(READ)
      else a.raw(READ, 502, '<html>502 Bad Gateway</html>')
      const started = performance.now()
      t.same(await read(client), EPOCH_INFO)
      t.ok(performance.now() - started < 1000, 'at once, not after a timeout')
      t.equal(b.count(READ), 1)
    })
  }
})

t.test('gateway errors, timeouts, huge and non-JSON answers are answers: never asked of another node', async (t) => {
  const { a, b, client } = await twoNodes(t, { timeoutMs: 300, maxResponseBytes: 64 * 1024 })
  a.fail(READ, 13, 'internal')
  await t.rejects(read(client), ChainStatusError)
  a.clearFaults()
  a.fail(READ, 14, 'node is catching up')
  await t.rejects(read(client), { statusCode: 503, message: 'node is catching up' })
  a.clearFaults()
  a.raw(READ, 200, '<html>')
  await t.rejects(read(client), ChainBadAnswerError)
  a.clearFaults()
  a.huge(READ, 1024 * 1024)
  await t.rejects(read(client), ChainAnswerTooLargeError)
  a.clearFaults()
  a.hang(READ)
  await t.rejects(read(client), ChainTimeoutError)
  t.equal(a.count(READ), 5)
  t.equal(b.count(READ), 0, 'node b was never asked')
})

t.test('a node that hangs costs at most the reads already sent to it', async (t) => {
  const { a, b, client, lines } = await twoNodes(t, { timeoutMs: 1000 })
  t.same(await sequential(client, 3), [])
  a.resetCounts()
  a.hang()
  // A burst that starts before anything could know: the reads sent to a are lost (504)...
  const burst = await concurrent(client, 10)
  t.ok(burst.length > 0, `${burst.length} of the burst went to the hanging node`)
  t.ok(burst.every((err) => err instanceof ChainTimeoutError), 'each a 504, at the chain timeout')
  t.equal(burst.length, a.count(READ), 'exactly the reads sent to node a')
  t.match(lines.find((l) => l.msg === 'chain node down'), { node: a.url, reason: 'no answer within 1s' })
  // ...and none after.
  t.same(await sequential(client, 10), [], 'sequential reads after it')
  t.same(await concurrent(client, 30), [], 'concurrent reads after it')
  t.equal(a.count(READ), burst.length, 'no read was sent to node a since')
  t.ok(b.count(READ) >= 40)
})

t.test('a node that starts hanging during sequential reads costs one read', async (t) => {
  const { a, client } = await twoNodes(t, { timeoutMs: 500 })
  a.hang(READ)
  const failures = await sequential(client, 10)
  t.equal(failures.length, 1)
  t.ok(failures[0] instanceof ChainTimeoutError)
  t.equal(a.count(READ), 1)
})

t.test('both nodes down: reads fail at once with 503 after asking each node once', async (t) => {
  const { a, b, client, lines } = await twoNodes(t)
  await Promise.all([a.refuse(), b.refuse()])
  const started = performance.now()
  const error = await read(client).catch((err: unknown) => err) as ChainUnavailableError
  t.ok(error instanceof ChainUnavailableError)
  t.match((error.cause as { code?: string }).code, 'ECONNRESET')
  t.ok(performance.now() - started < 1000, 'at once')
  t.same(lines.filter((l) => l.msg === 'chain node down').map((l) => l.node), [a.url, b.url])
  t.same(await concurrent(client, 10).then((f) => f.length), 10, 'every read fails while both are down')
  await b.restore()
  t.same(await read(client), EPOCH_INFO, 'a node that is back answers the next read, even before its probe')
})

t.test('the concurrency bound and coalescing hold across nodes', async (t) => {
  await t.test('concurrency', async (t) => {
    const { a, b, client } = await twoNodes(t, { concurrency: 2 })
    a.latency(100)
    b.latency(100)
    const reads = Array.from({ length: 8 }, () => read(client))
    let most = 0
    for (let i = 0; i < 40; i++) {
      most = Math.max(most, client.inFlight)
      await sleep(10)
    }
    await Promise.all(reads)
    t.equal(most, 2, 'never more than 2 chain requests in flight across both nodes')
    t.equal(a.count(READ) + b.count(READ), 8)
  })
  await t.test('coalescing', async (t) => {
    const { a, b, client } = await twoNodes(t, { coalesce: true })
    await a.refuse()
    b.latency(50)
    const results = await Promise.all(Array.from({ length: 200 }, () => client.get(READ)))
    t.ok(results.every((r) => r === results[0]), 'one shared answer')
    t.equal(b.count(READ), 1, 'one chain request, on the node that answers')
  })
})

t.test('the node a read fails over from is re-admitted by its probe once it answers', async (t) => {
  const { a, client, lines } = await twoNodes(t)
  await a.refuse()
  await read(client)
  await a.restore()
  await until(() => lines.some((l) => l.msg === 'chain node up'), 'node a up')
  t.ok(a.count(PROBE_PATH) >= 1, 're-admitted by a node_info probe')
  a.resetCounts()
  await read(client)
  t.equal(a.count(READ), 1, 'and it is the preferred node again')
})

t.test('the app: with both nodes down, reads are 503 and /readyz is 503; one node back is enough', async (t) => {
  const [a, b] = await Promise.all([startChainSimulator(), startChainSimulator()])
  t.teardown(async () => { await Promise.all([a.close(), b.close()]) })
  const { app, logs } = await buildTestApp(t, { sim: a, env: { CHAIN_REST_URL: `${a.url},${b.url}` } })
  await Promise.all([a.refuse(), b.refuse()])
  const res = await app.inject('/v1/epochs/latest')
  t.equal(res.statusCode, 503)
  t.same(res.json(), { message: 'chain unavailable' })
  const ready = await app.inject('/readyz')
  t.equal(ready.statusCode, 503)
  t.same(ready.json(), { status: 'not ready', reason: 'chain unreachable', error: 'node 1: chain unavailable; node 2: chain unavailable' })
  t.ok(logs.some((l) => l.msg === 'chain node down' && l.node === b.url), 'node state changes are in the app log')
  await b.restore()
  t.equal((await app.inject('/v1/epochs/latest')).statusCode, 200, 'one node back: reads answer')
})

t.test('a node that rate-limits (gRPC ResourceExhausted, whatever its HTTP status) is skipped: the read goes to the next node at once (issue 33)', async (t) => {
  const { a, b, client, lines } = await twoNodes(t)
  a.fail(READ, 8, 'rate limit exceeded', 500)
  t.same(await client.get(READ), EPOCH_INFO)
  t.same([a.count(READ), b.count(READ)], [1, 1])
  t.match(lines, [{ msg: 'chain node rate-limited; skipped until its Retry-After', node: a.url }])
  t.same(client.nodesUp, [false, true])
})

t.test('a proxy\'s 429 page sends the read to the next node; with every node refusing, the client gets a 429', async (t) => {
  const { a, b, client } = await twoNodes(t)
  a.raw(READ, 429, '<html>429 Too Many Requests</html>', { 'retry-after': '9' })
  t.same(await client.get(READ), EPOCH_INFO)
  b.raw(READ, 429, '<html>429 Too Many Requests</html>', { 'retry-after': '7' })
  const error = await client.get(READ).catch((err: unknown) => err) as ChainStatusError
  t.ok(error instanceof ChainStatusError)
  t.equal(error.statusCode, 429)
  t.equal(error.message, 'chain node rate-limited this read')
  // Every node rate-limited: the one asked last (the first one, skipped until then) answers.
  t.same(error.headers, { 'retry-after': '9' }, 'with that node\'s Retry-After, for the client')
})
