import t from 'tap'
import { Agent, request as undiciRequest } from 'undici'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { startMain } from '../../harness/main-process.js'

// Long-poll's wake-up (src/waiting/head-follower.ts) as a client sees it: how soon after a block
// 200 waiters at the head are answered. A measurement under a load of its own, so npm test runs
// it on its own (test/loader/run.mjs, ALONE); docs/waiting.md.

const CACHE_ON = { EDGE_API_CACHE_SIZE: '64MiB' }
const ROUTE = '/v1/epochs/latest'

t.test('200 waiters at the head are answered soon after the next block, not at the next head poll of a read', async (t) => {
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
  for (let block = 0; block < 3; block++) {
    const head = sim.clock.height
    const waiters = Array.from({ length: 200 }, async () => {
      const res = await undiciRequest(`${origin}${ROUTE}?afterHeight=${head}&wait=30`, { dispatcher: agent })
      await res.body.dump()
      return { at: performance.now(), height: res.headers['x-block-height'] }
    })
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const landed = performance.now()
    sim.clock.advance()
    const answers = await Promise.all(waiters)
    // Asserted after: 200 assertions while answers arrive would be the test's time, not the replica's.
    for (const { at } of answers) latencies.push(at - landed)
    t.ok(answers.every(({ height }) => height === String(head + 1)), 'each at the new block')
  }
  latencies.sort((a, b) => a - b)
  const p99 = latencies[Math.ceil(latencies.length * 0.99) - 1] as number
  // The 50 ms goal is benchmark 17's (p99 23 ms, uninstrumented): here the clients share a
  // process with tap's coverage and the replica logs each answer, so the bound is the suite's
  // (136-350 ms measured in whole-suite runs on a 2-core host, six test files at once). Without
  // the head follower it is the next read's head poll, a second or more.
  t.ok(p99 < 700, `p99 ${p99.toFixed(1)} ms, p50 ${(latencies[latencies.length / 2] as number).toFixed(1)} ms (600 answers)`)
})
