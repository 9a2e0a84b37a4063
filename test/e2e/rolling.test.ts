import { existsSync } from 'node:fs'
import t, { type Test } from 'tap'
import { Client, request } from 'undici'
import { startChainSimulator, type ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { CURRENT_EPOCH } from '../../harness/chain-simulator/data/epochs.js'
import { COMPLETED_REQUEST_ID } from '../../harness/chain-simulator/data/bls.js'
import { POC_START } from '../../harness/chain-simulator/data/epochs.js'
import { requireTool } from '../fixtures/deploy/tools.js'
import { Router } from '../../harness/haproxy.js'
import { Load, type LoadTotals } from '../fixtures/e2e/load.js'
import { DIST_MAIN, Replica } from '../../harness/replica.js'
import { freePorts } from '../../harness/ports.js'
import { until } from '../../harness/wait.js'
import { within } from '../../harness/deadline.js'

// The first promise (README): every replica behind a real HAProxy, rendered from the deployed
// template, replaced one after another by SIGTERM under continuous load, loses nothing. The
// replicas read from two chain nodes (docs/chain-nodes.md), and one of them restarts during the load.

// 50/s: what the load proves (no request lost across the drains and a node's restart) does
// not grow with the rate, and the suite's two cores pay for every request (and its debug log
// line, parsed here) of the ~30 s it runs (issue 54).
const RPS = 50
const REPLICAS = 2
const CONNECTIONS = 8
const BUDGET = '20s'
const SLOW_MS = 8000
/**
 * The counter-test's slow read: long enough to be in flight on the replica killed under it
 * (killed as soon as it logs the request), then read again whole by the router's replay.
 */
const REPLAYED_SLOW_MS = 3000
// The slow request is the only one that reads this participant, so only it gets the latency.
const SLOW_ADDRESS = PARTICIPANTS[4].address
const SLOW_PATH = `/v1/participants/${SLOW_ADDRESS}`
const SLOW_CHAIN_PREFIX = `/productscience/inference/inference/inference_participant/${SLOW_ADDRESS}`
// How long the chain node that restarts refuses connections.
const NODE_DOWN_MS = 1500

// A GET mix over every public /v1 route that has fixture data, each checked to answer 200
// on a replica before the load starts.
const CANDIDATES = [
  '/v1/status',
  '/v1/participants',
  ...PARTICIPANTS.slice(0, 4).map((p) => `/v1/participants/${p.address}`),
  '/v1/epochs/latest',
  `/v1/epochs/${CURRENT_EPOCH}/participants`,
  '/v1/models',
  '/v1/governance/models',
  '/v1/governance/models-legacy',
  '/v1/pricing',
  '/v1/restrictions/status',
  '/v1/restrictions/exemptions',
  '/v1/bls/epoch/7',
  '/v1/bls/epochs/7',
  `/v1/bls/signatures/${COMPLETED_REQUEST_ID}`,
  '/v1/bridge/addresses?chain=ethereum',
  `/v1/poc-batches/${POC_START}`,
  '/healthz'
]

t.setTimeout(600_000)

interface Stack {
  /** Two nodes of the simulated chain; every replica has both in CHAIN_REST_URL. */
  readonly nodes: readonly [ChainSimulator, ChainSimulator]
  readonly chainUrl: string
  readonly replicas: Replica[]
  /** Every replica started, replacements included (their logs). */
  readonly started: Replica[]
  readonly router: Router
  readonly mix: string[]
  readonly announce: string
}

/**
 * Two chain nodes, REPLICAS replicas on fixed free ports, HAProxy in front, all UP. Two: each is
 * drained while the other serves, and serves while the other's replacement comes up; a third
 * added one more drain of the same kind (~8 s and two processes of the suite's CPU: issue 54).
 */
async function startStack (t: Test, announce: string): Promise<Stack> {
  const nodes = await Promise.all([startChainSimulator(), startChainSimulator()])
  const chainUrl = nodes.map((n) => n.url).join(',')
  const [routerPort, metricsPort, ...ports] = await freePorts(2 + REPLICAS) as [number, number, ...number[]]
  const replicas = ports.map((port) => new Replica({ port, chainUrl, announce, budget: BUDGET }))
  const stack = { nodes, chainUrl, replicas, started: [...replicas], router: undefined as unknown as Router, mix: [] as string[], announce }
  t.teardown(async () => {
    await Promise.all(stack.started.map(async (r) => r.stop()))
    await stack.router?.stop()
    await Promise.all(nodes.map(async (n) => n.close()))
  })
  await Promise.all(replicas.map(async (r) => r.listening()))

  const failing: string[] = []
  for (const path of CANDIDATES) {
    const answer = await request(`http://127.0.0.1:${replicas[0]?.port}${path}`)
    await answer.body.dump()
    if (answer.statusCode === 200) stack.mix.push(path)
    else failing.push(`${path} (${answer.statusCode})`)
  }
  t.same(failing, [], 'every route of the mix answers 200 on a replica')
  for (const node of nodes) node.resetCounts()

  stack.router = new Router(replicas.map((r) => `127.0.0.1:${r.port}`), routerPort, metricsPort)
  // HAProxy before 3.1 (no init-state) starts servers UP; wait until each has also passed a
  // check. Polling the runtime API: there is no event for "already UP at start".
  await stack.router.allUp(REPLICAS)
  return stack
}

function report (t: Test, name: string, totals: LoadTotals, stack: Stack): void {
  t.comment(`${name}: ${totals.requests} requests in ${totals.seconds.toFixed(1)}s (${(totals.requests / totals.seconds).toFixed(0)}/s over ${CONNECTIONS} keep-alive connections, target ${RPS}/s, ${totals.skipped} sends skipped while ${CONNECTIONS * 4} were in flight), ` +
    `${totals.requests - totals.ok} failed (non-2xx ${JSON.stringify(totals.statuses)}, errors ${JSON.stringify(totals.errors)}), ` +
    `latency p50 ${totals.p50.toFixed(1)}ms p99 ${totals.p99.toFixed(1)}ms max ${totals.max.toFixed(0)}ms; ` +
    `router retried ${stack.router.retried.length} of ${stack.router.accessLogLines} logged requests, answered ${stack.router.queueTimeouts.length} 503 after timeout queue and ${stack.router.queueFull.length} at once, queue full`)
  for (const sample of totals.samples) t.comment(`  failed: ${sample}`)
  for (const line of stack.router.retried.slice(0, 5)) t.comment(`  retried: ${line}`)
}

const serverName = (index: number): string => `edgeapi${index + 1}`
/** The router's view of the pool with every server UP. */
const allUp = (): Map<string, string> => new Map(Array.from({ length: REPLICAS }, (_, i) => [serverName(i), 'UP']))

t.test('rolling replacement behind HAProxy under load loses nothing', async (t) => {
  if (!requireTool(t, 'haproxy', 'the rolling-replacement test')) return
  if (!existsSync(DIST_MAIN)) {
    t.fail(`${DIST_MAIN} is missing: run npm run build (npm test does it first)`)
    return
  }
  const stack = await startStack(t, '5s')
  const { nodes, replicas, router } = stack
  t.same(await router.serverStatus(), allUp(), 'the router starts with every replica UP')
  t.comment(`GET mix (${stack.mix.length} routes): ${stack.mix.join(' ')}`)
  t.equal(stack.mix.length, CANDIDATES.length, 'the whole mix')

  const load = new Load(router.url, stack.mix, RPS, CONNECTIONS)
  load.start()

  // One slow request through the router; the replica that logs its request id gets SIGTERM first.
  for (const node of nodes) node.latency(SLOW_MS, SLOW_CHAIN_PREFIX)
  const slowClient = new Client(router.url)
  t.teardown(async () => slowClient.destroy())
  const slowStarted = performance.now()
  const slow = slowClient.request({ path: SLOW_PATH, method: 'GET' })
    .then(async ({ statusCode, body }) => ({ statusCode, body: await body.text(), ms: performance.now() - slowStarted }))
  const holder = await Promise.race(replicas.map(async (r, i) => {
    // By its path: the router replaces any X-Request-Id a client sends with its own.
    await r.waitFor((l) => l.msg === 'incoming request' && l.url === SLOW_PATH, 'the slow request')
    return i
  }))
  const order = [holder, ...[...replicas.keys()].filter((i) => i !== holder)]

  // The chain node every replica prefers restarts while the first replica is replaced: reads
  // in flight on it are retried on the other node, and /readyz stays 200 on the second node.
  const [preferred, standby] = nodes
  const nodeRestart = (async () => {
    await new Promise((resolve) => setTimeout(resolve, 1000))
    await preferred.refuse()
    await new Promise((resolve) => setTimeout(resolve, NODE_DOWN_MS))
    await preferred.restore()
  })()

  const timings: string[] = []
  for (const index of order) {
    const old = replicas[index] as Replica
    const name = serverName(index)
    const signalled = performance.now()
    old.signal('SIGTERM')
    const down = router.waitFor(name, 'DOWN', signalled)
    const listenerClosed = old.waitFor((l) => l.msg === 'listener closed', 'listener closed').then(() => performance.now())
    const { code, signal } = await within(old.exited, `${name} exited after SIGTERM`, 20_000 + 30_000)
    const exitedAt = performance.now()
    t.equal(code, 0, `${name} (port ${old.port}) exited 0 after SIGTERM${signal === null ? '' : ` (signal ${signal})`}`)
    const downAt = (await within(down, `the router marking ${name} DOWN`)).at
    t.ok(downAt < await listenerClosed, `the router marked ${name} DOWN before its listener closed`)

    const fresh = new Replica({ port: old.port, chainUrl: stack.chainUrl, announce: '5s', budget: BUDGET })
    replicas[index] = fresh
    stack.started.push(fresh)
    const spawned = performance.now()
    const up = await within(router.waitFor(name, 'UP', spawned), `the router marking the new ${name} UP`)
    t.pass(`the router admitted the new ${name} (${up.line.replace(/,.*/, '')})`)
    timings.push(`${name}${index === holder ? ' (held the slow request)' : ''}: DOWN ${((downAt - signalled) / 1000).toFixed(1)}s after SIGTERM, ` +
      `exit 0 after ${((exitedAt - signalled) / 1000).toFixed(1)}s, replacement UP ${((up.at - spawned) / 1000).toFixed(1)}s after spawn`)
  }

  const slowResult = await within(slow, 'the slow request\'s answer')
  await nodeRestart
  const totals = await load.stop()
  const status = await router.serverStatus()
  const nodeLines = stack.started.flatMap((r) => r.lines.filter((l) => l.node === preferred.url).map((l) => l.msg))

  t.equal(slowResult.statusCode, 200, `the slow request in flight on a replaced replica completed with 200 after ${(slowResult.ms / 1000).toFixed(1)}s`)
  t.match(JSON.parse(slowResult.body), { balance: Number(PARTICIPANTS[4].balance) }, 'with its answer')
  t.same(totals.statuses, {}, 'zero non-2xx answers at the client')
  t.same(totals.errors, {}, 'zero connection errors at the client')
  t.equal(totals.ok, totals.requests, 'every request succeeded')
  t.ok(totals.requests >= RPS * 10, `continuous load (${totals.requests} requests)`)
  t.same(status, allUp(), 'every replacement is UP at the end')
  t.ok(nodeLines.includes('chain node down') && nodeLines.includes('chain node up'),
    `the replicas saw chain node 1 restart and come back (${nodeLines.filter((m) => m === 'chain node down').length} replicas logged it down)`)
  t.ok(standby.count() > 0, `chain node 2 answered reads meanwhile (${standby.count()} chain requests)`)

  report(t, 'rolling replacement', totals, stack)
  t.comment(`  chain node 1 refused connections for ${NODE_DOWN_MS / 1000}s during the first replacement; node 2 took ${standby.count()} chain requests`)
  for (const line of timings) t.comment(`  ${line}`)
  t.comment(`  slow request: 200 after ${(slowResult.ms / 1000).toFixed(1)}s`)
})

t.test('counter-test: announce 0 and a killed replica, the same harness', async (t) => {
  if (!requireTool(t, 'haproxy', 'the counter-test')) return
  if (!existsSync(DIST_MAIN)) {
    t.fail(`${DIST_MAIN} is missing: run npm run build`)
    return
  }
  const stack = await startStack(t, '0')
  const { nodes, replicas, router } = stack
  const load = new Load(router.url, stack.mix, RPS, CONNECTIONS)
  load.start()
  for (const node of nodes) node.latency(REPLAYED_SLOW_MS, SLOW_CHAIN_PREFIX)
  const slowClient = new Client(router.url)
  t.teardown(async () => slowClient.destroy())
  const slowStarted = performance.now()
  const slow = slowClient.request({ path: SLOW_PATH, method: 'GET' })
    .then(async ({ statusCode, body }) => ({ statusCode, body: await body.text(), ms: performance.now() - slowStarted }),
      (err: NodeJS.ErrnoException) => ({ statusCode: 0, body: `${err.code}: ${err.message}`, ms: performance.now() - slowStarted }))
  const holder = await Promise.race(replicas.map(async (r, i) => {
    // By its path: the router replaces any X-Request-Id a client sends with its own.
    await r.waitFor((l) => l.msg === 'incoming request' && l.url === SLOW_PATH, 'the slow request')
    return i
  }))

  // 1. Kill the replica that holds the slow request: no announcement, no drain at all.
  const victim = replicas[holder] as Replica
  const killed = performance.now()
  victim.signal('SIGKILL')
  t.same(await within(victim.exited, 'the killed replica gone'), { code: null, signal: 'SIGKILL' })
  const down = await within(router.waitFor(serverName(holder), 'DOWN', killed), 'the router marking the killed replica DOWN')
  const slowResult = await within(slow, 'the slow request\'s replayed answer')
  // HAProxy writes the access-log line as the stream ends, a moment after the client has its answer.
  await until(() => router.retried.some((line) => line.includes(SLOW_PATH)), 'the replay in the router log', { timeoutMs: 20_000, intervalMs: 50 })
  const replayed = router.retried.filter((line) => line.includes(SLOW_PATH))
  // What the router hides: its policy replays an idempotent GET that got no answer
  // (retry-on empty-response, redispatched), so the slow request is lost on the killed
  // replica and answered by another one, twice as late.
  t.equal(replayed.length, 1, 'the slow request was lost on the killed replica: the router log shows it replayed')
  t.equal(slowResult.statusCode, 200, 'and the replay answered it')
  t.ok(slowResult.ms >= REPLAYED_SLOW_MS, `late: the replay started the ${REPLAYED_SLOW_MS / 1000}s chain query over (${(slowResult.ms / 1000).toFixed(1)}s)`)
  const afterOne = { requests: load.failures }

  // 2. What nothing can hide: kill the other replicas too, and the same client counters
  // must see the loss (HAProxy answers 503 when no server is left).
  const rest = replicas.filter((_r, i) => i !== holder)
  for (const r of rest) r.signal('SIGKILL')
  await within(Promise.all(rest.map(async (r) => r.exited)), 'the other killed replicas gone')
  await until(() => load.failures >= 10, 'the client to count failures', { intervalMs: 100 })
  const totals = await load.stop()

  report(t, 'counter-test', totals, stack)
  t.comment(`  killed ${serverName(holder)}: router DOWN after ${((down.at - killed) / 1000).toFixed(1)}s; failures at the client while the other replica remained: ${afterOne.requests}; ` +
    `slow request replayed by the router, 200 after ${(slowResult.ms / 1000).toFixed(1)}s`)
  t.ok(totals.requests - totals.ok >= 10, `the harness counts lost requests (${totals.requests - totals.ok} failed once no replica was left)`)
  // The router answers 503 once no replica is left; a request in flight on the killed replica's
  // connection may see that connection closed instead (the load stops at 10 failures of either kind).
  t.ok((totals.statuses['503'] ?? 0) > 0 && Object.keys(totals.statuses).every((status) => status === '503'), `as 503 from the router (${JSON.stringify(totals.statuses)})`)
})
