import { existsSync } from 'node:fs'
import t from 'tap'
import { request } from 'undici'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { requireTool } from '../fixtures/deploy/tools.js'
import { Router } from '../../harness/haproxy.js'
import { DIST_MAIN, Replica } from '../../harness/replica.js'
import { freePorts } from '../../harness/ports.js'
import { openSse } from '../fixtures/sse-client.js'
import { within } from '../../harness/deadline.js'

// Issue 42's promise: a rolling replacement of the replicas behind the router (HAProxy, the
// deployed template) while long-pollers and event-stream clients follow a chain that moves a
// block every 200 ms (five times the real chain's pace: more heights cross each replacement in
// less time). Every stream client sees every height once, in order; no long-poller ever sees a
// lower height; no request fails; each replica exits 0 within its budget.
//
// Two replicas, each replaced once: every client is drained off a replica, resumes on the other
// from its cursor, and is drained off that one too (its second resume lands on a replacement).
// A third replica adds a third drain of the same kind, ~8 s of this file run alone (the
// announce, then the new replica's two checks) and a process on the suite's two cores (issue 54).
const REPLICAS = 2

// 50 long-pollers + 50 stream clients: what is proved (every height once, in order, across
// the drains) does not grow with the count, and the suite's two cores pay for each client.
// WAITING_TEST_CLIENTS=200 runs issue 42's 200 + 200; what 200 waiters cost is benchmark 17.
const CLIENTS = Number(process.env.WAITING_TEST_CLIENTS ?? 50)
const BLOCK_MS = 200
/** Blocks in two seconds: how far behind the chain's head a client may be seen at the start or the end (a reconnect, an answer in flight). */
const SLACK = Math.round(2000 / BLOCK_MS)
const BUDGET_MS = 20_000
const ROUTE = '/v1/epochs/latest'

t.setTimeout(300_000)

interface PollerLog { heights: number[], failures: string[] }

/** A long-poller: asks for the answer above the height it last saw, forever, until stopped. */
async function longPoller (url: string, start: number, stopped: () => boolean, log: PollerLog): Promise<void> {
  let seen = start
  while (!stopped()) {
    try {
      const res = await request(`${url}${ROUTE}?afterHeight=${seen}&wait=25`)
      // Whose refusal a failure was (the router's HTML or a replica's JSON) is in its body.
      if (res.statusCode !== 200) { log.failures.push(`status ${res.statusCode}: ${(await res.body.text()).replace(/\s+/g, ' ').slice(0, 160)}`); continue }
      await res.body.dump()
      const height = Number(res.headers['x-block-height'])
      if (height > seen) { log.heights.push(height); seen = height } else if (height < seen - 0) log.heights.push(height)
    } catch (err) {
      log.failures.push((err as Error).message)
    }
  }
}

/** An EventSource-like client: reconnects after the retry: it was given, with the last id it saw. */
async function streamClient (url: string, stopped: () => boolean, log: PollerLog): Promise<void> {
  let lastId: string | undefined
  let retry = 3000
  while (!stopped()) {
    try {
      const stream = await openSse(`${url}/v1/events`, lastId === undefined ? {} : { 'last-event-id': lastId })
      if (stream.status !== 200) { log.failures.push(`stream status ${stream.status}`); await pause(1000); continue }
      const stop = setInterval(() => { if (stopped()) stream.close() }, 200)
      let read = 0
      const take = (): void => {
        for (; read < stream.events.length; read++) {
          const event = stream.events[read]!
          if (event.retry !== undefined) retry = event.retry
          if (event.id !== undefined) lastId = event.id
          if (event.event === 'head') log.heights.push(Number(event.id))
        }
      }
      await Promise.race([stream.ended, (async () => { while (!stopped()) { await stream.next(() => true).catch(() => {}); take(); await pause(0) } })()])
      clearInterval(stop)
      take()
      if (!stopped()) await pause(retry)
    } catch (err) {
      log.failures.push((err as Error).message)
      await pause(1000)
    }
  }
}

async function pause (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

t.test('rolling replacement with long-pollers and event streams: nothing lost, nothing twice, nothing failed', async (t) => {
  if (!requireTool(t, 'haproxy', 'the waiting clients\' rolling test')) return
  if (!existsSync(DIST_MAIN)) {
    t.fail(`${DIST_MAIN} is missing: run npm run build (npm test does it first)`)
    return
  }
  const sim = await startChainSimulator()
  sim.clock.every(BLOCK_MS)
  const [routerPort, metricsPort, ...ports] = await freePorts(2 + REPLICAS) as [number, number, ...number[]]
  const options = (port: number) => ({ port, chainUrl: sim.url, announce: '5s', budget: `${BUDGET_MS / 1000}s`, env: { EDGE_API_CACHE_SIZE: '64MiB', EDGE_API_LOG_LEVEL: 'info' } })
  const replicas = ports.map((port) => new Replica(options(port)))
  const started = [...replicas]
  const router = new Router(replicas.map((r) => `127.0.0.1:${r.port}`), routerPort, metricsPort)
  t.teardown(async () => {
    sim.clock.stop()
    await Promise.all(started.map(async (r) => r.stop()))
    await router.stop()
    await sim.close()
  })
  await Promise.all(replicas.map(async (r) => r.listening()))
  await router.allUp(REPLICAS)

  let stop = false
  const stopped = (): boolean => stop
  const first = sim.clock.height
  const pollers = Array.from({ length: CLIENTS }, () => ({ heights: [], failures: [] }) as PollerLog)
  const streams = Array.from({ length: CLIENTS }, () => ({ heights: [], failures: [] }) as PollerLog)
  const running = [
    ...pollers.map(async (log) => await longPoller(router.url, first, stopped, log)),
    ...streams.map(async (log) => await streamClient(router.url, stopped, log))
  ]
  await pause(1000)

  const exits: string[] = []
  for (let index = 0; index < REPLICAS; index++) {
    const old = replicas[index] as Replica
    const signalled = performance.now()
    old.signal('SIGTERM')
    const { code } = await within(old.exited, `replica ${index + 1} exited after SIGTERM`, BUDGET_MS + 30_000)
    const tookMs = performance.now() - signalled
    if (code !== 0) t.comment(JSON.stringify(old.lines.filter((l) => (l.level as number) >= 40 || /listener|drain|shutdown/.test(l.msg as string)).slice(-8)))
    t.equal(code, 0, `replica ${index + 1} exited 0`)
    t.ok(tookMs < BUDGET_MS, `within its budget (${(tookMs / 1000).toFixed(1)} s)`)
    exits.push(`${(tookMs / 1000).toFixed(1)} s`)
    const fresh = new Replica(options(old.port))
    replicas[index] = fresh
    started.push(fresh)
    await within(router.waitFor(`edgeapi${index + 1}`, 'UP', performance.now()), `the router marking the new edgeapi${index + 1} UP`)
  }
  // Past the longest retry: a stream the last drain ended (retry: 1-5 s) has reconnected.
  await pause(5000)
  const last = sim.clock.height
  stop = true
  await Promise.all(running)

  const failures = [...pollers, ...streams].flatMap((l) => l.failures)
  t.same(failures.slice(0, 5), [], `0 failed requests (${failures.length})`)
  let skipped = 0
  for (const [i, log] of pollers.entries()) {
    t.ok(log.heights.every((h, j) => j === 0 || h > (log.heights[j - 1] as number)), `long-poller ${i}: heights only rise`)
    t.ok((log.heights.at(-1) ?? 0) >= last - SLACK, `long-poller ${i}: followed to the end`)
    skipped += log.heights.slice(1).filter((h, j) => h - (log.heights[j] as number) > 1).length
  }
  for (const [i, log] of streams.entries()) {
    const from = log.heights[0] as number
    t.same(log.heights, Array.from({ length: log.heights.length }, (_, j) => from + j), `stream client ${i}: every height once, in order`)
    t.ok(from <= first + 2 * SLACK && (log.heights.at(-1) ?? 0) >= last - SLACK, `stream client ${i}: from ${from} to ${log.heights.at(-1)} (chain ${first}–${last})`)
  }
  t.comment(`${CLIENTS} long-pollers + ${CLIENTS} stream clients, chain ${first}–${last} (a block every ${BLOCK_MS} ms), replicas exited after ${exits.join(', ')}; ` +
    `long-pollers skipped a height ${skipped} times (two blocks between an answer and the next ask); ${failures.length} failures`)
})
