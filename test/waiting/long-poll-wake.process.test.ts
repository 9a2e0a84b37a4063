import t from 'tap'
import { Agent, request as undiciRequest } from 'undici'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { startMain } from '../../harness/main-process.js'
import { BURST_POLLS, FOLLOW_MS } from '../../src/waiting/head-follower.js'

// Long-poll's wake-up (src/waiting/head-follower.ts) as a client sees it: how soon after a block
// 200 waiters at the head are answered, on a chain that lands a block every BLOCK_MS, and what
// following it costs the node. A measurement under a load of its own, so npm test runs it on
// its own (test/loader/run.mjs, ALONE); docs/waiting.md.

const CACHE_ON = { EDGE_API_CACHE_SIZE: '64MiB' }
const ROUTE = '/v1/epochs/latest'
const LATEST = '/cosmos/base/tendermint/v1beta1/blocks/latest'
const BLOCK_MS = 1000
/** Blocks while the follower learns the chain's pace (two rises make a first estimate), not measured. */
const LEARNING = 3
const MEASURED = 3
const WAITERS = 200

t.test('200 waiters at the head are answered soon after each block of a steady chain, at no more head polls than one per FOLLOW_MS', async (t) => {
  // The replica as deployed (dist/main.js, its own process), so the clients' own work is not
  // the replica's; the chain simulator here, so the test knows when each block lands.
  const sim = await startChainSimulator()
  const main = startMain({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_DRAIN_ANNOUNCE: '0', ...CACHE_ON })
  t.teardown(async () => {
    main.child.kill('SIGKILL')
    await main.exited
    await sim.close()
  })
  const origin = `http://127.0.0.1:${await main.port()}`
  const agent = new Agent({ connections: null })
  t.teardown(async () => await agent.close())
  const latencies: number[] = []
  const start = performance.now()
  let pollsBefore = 0
  for (let block = 0; block < LEARNING + MEASURED; block++) {
    if (block === LEARNING) pollsBefore = sim.count(LATEST)
    const head = sim.clock.height
    // wait=10: a waiter the block never wakes ends as a 304, and fails 'each at the new block'.
    const waiters = Array.from({ length: WAITERS }, async () => {
      const res = await undiciRequest(`${origin}${ROUTE}?afterHeight=${head}&wait=10`, { dispatcher: agent })
      await res.body.dump()
      return { at: performance.now(), height: res.headers['x-block-height'] }
    })
    // The chain's own pace: each block BLOCK_MS after the one before, however long answering took.
    await new Promise((resolve) => setTimeout(resolve, start + (block + 1) * BLOCK_MS - performance.now()))
    const landed = performance.now()
    sim.clock.advance()
    const answers = await Promise.all(waiters)
    // Asserted after: 200 assertions while answers arrive would be the test's time, not the replica's.
    if (block >= LEARNING) for (const { at } of answers) latencies.push(at - landed)
    t.ok(answers.every(({ height }) => height === String(head + 1)), `each waiter answered at the new block (${head + 1})`)
  }
  const seconds = (performance.now() - start) / 1000 - LEARNING * BLOCK_MS / 1000
  const polls = sim.count(LATEST) - pollsBefore
  latencies.sort((a, b) => a - b)
  const p50 = latencies[latencies.length / 2] as number
  const p99 = latencies[Math.ceil(latencies.length * 0.99) - 1] as number
  t.comment(`wake p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (${latencies.length} answers); ${(polls / seconds).toFixed(1)} head polls/s`)
  // The follower's budget: one poll per FOLLOW_MS on average and BURST_POLLS saved before
  // (a hard bound of its own), and one poll a second of the replica's own reads' (ChainHeads).
  t.ok(polls <= seconds * (1000 / FOLLOW_MS + 1) + BURST_POLLS, `${polls} head polls in ${seconds.toFixed(1)} s: within one per FOLLOW_MS and the burst`)
  // The follower sees a block p50 12-21 ms after it lands (one waiter answered p50 21-40 ms at load
  // average 15-25, 93-129 ms at a fixed FOLLOW_MS); answering 200 takes the rest: p99 270-850 ms
  // on 2 cores at load average 8-29, ~40 ms on a quieter one (benchmark 17). The bound is an
  // order of magnitude above a loaded machine's ~300 ms: what it catches is a waiter woken by
  // something else than the follower (a read's head poll, the wait's end), seconds late.
  t.ok(p99 < 3000, `p99 ${p99.toFixed(1)} ms, p50 ${p50.toFixed(1)} ms (${latencies.length} answers)`)
})
