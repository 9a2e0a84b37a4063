import t from 'tap'
import { BlockClock } from '../../../harness/chain-simulator/block-clock.js'
import { SignedChain } from '../../../harness/chain-simulator/signed-chain.js'
import { startChainSimulator } from '../../../harness/chain-simulator/simulator.js'
import { until } from '../../../harness/wait.js'
import { serveMain } from '../../fixtures/serve-main.js'

// The signed chain as edge-api itself reads it, over real sockets: node dist/main.js in front
// of a signed-chain node follows its head and checks its blocks' commits with its own
// verifier (GET /v1/debug/verify/{height}: the block's last_commit against the set at the
// height below, fetched page by page) — the chain's JSON is the gateway's, not only the
// tests' decoder's. A fork node's commits, signed by under a third, are refused by it.

t.setTimeout(120_000)

t.test('dist/main.js reads the signed chain: its head, and 16-validator commits that verify; a fork\'s do not', async (t) => {
  const clock = new BlockClock()
  // 16 validators, not the benchmark's 100 (bench 19): each commit checked in the verify
  // routes' worker within its 5 s task limit even on a loaded machine (100 missed it once there).
  const chain = new SignedChain({ validators: 16, firstHeight: clock.height - 30 })
  const sim = await startChainSimulator(0, { clock, chain })
  t.teardown(async () => { await sim.close() })
  const { origin } = await serveMain(t, [sim], { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' })
  const get = async (path: string): Promise<{ status: number, headers: Headers, body: string }> => {
    const res = await fetch(origin + path, { signal: AbortSignal.timeout(30_000) })
    return { status: res.status, headers: res.headers, body: await res.text() }
  }
  const status = await get('/v1/epochs/latest')
  t.equal(status.status, 200, `a latest-state read is served: ${status.body.slice(0, 200)}`)
  t.equal(Number(status.headers.get('x-block-height')), clock.height, 'at the signed chain\'s head')
  // The verify routes' worker thread starts with the first check: on a loaded machine that can
  // outlast the task's 5 s limit, answered 503 "retry shortly", as a client then does.
  const verify = async (height: number): Promise<{ status: number, body: string }> => {
    let answer = { status: 0, body: '' }
    await until(async () => { answer = await get(`/v1/debug/verify/${height}`); return answer.status !== 503 },
      `block ${height}'s check answered, not 503 (retry shortly)`, { timeoutMs: 60_000, intervalMs: 200 })
    return answer
  }
  for (const height of [clock.height - 25, clock.height - 1]) {
    const verified = await verify(height)
    t.equal(verified.status, 200, `block ${height}'s commit verifies in edge-api: ${verified.body.slice(0, 200)}`)
  }
  sim.lies.forkFrom = clock.height - 10
  const forked = await verify(clock.height - 5)
  t.equal(forked.status, 400, `a fork block's commit (under a third signed) is refused: ${forked.status} ${forked.body.slice(0, 200)}`)
})
