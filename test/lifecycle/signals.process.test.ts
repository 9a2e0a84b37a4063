import t, { type Test } from 'tap'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { startChainSimulator, type ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { startMain, type MainProcess } from '../../harness/main-process.js'
import { until } from '../../harness/wait.js'

// Real signals to a real child process (dist/main.js): escalation and the budget.
// Times are read from the child's own log lines; the upper bounds leave seconds for a loaded
// machine and still tell the behaviour apart from the alternative (a window or a chain
// timeout of minutes).
t.setTimeout(120_000)

const ONE = '/productscience/inference/inference/inference_participant/'

async function boot (t: Test, env: Record<string, string>): Promise<{ main: MainProcess, sim: ChainSimulator, origin: string }> {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  // A chain timeout far beyond the test: a hanging request must stay in flight until the drain acts.
  const main = startMain({ CHAIN_REST_URL: sim.url, EDGE_API_PORT: '0', EDGE_API_HOST: '127.0.0.1', EDGE_API_CHAIN_TIMEOUT: '10m', ...env })
  t.teardown(() => main.child.kill('SIGKILL'))
  return { main, sim, origin: `http://127.0.0.1:${await main.port()}` }
}

/** Starts a request that hangs on the chain; resolves once the chain has it. Its result: status or error. */
async function hangingRequest (sim: ChainSimulator, origin: string): Promise<{ result: Promise<string> }> {
  sim.hang(ONE)
  const pending = (async () => {
    // /v1 may shed load for a moment on a busy machine (503 + Retry-After): ask again.
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${origin}/v1/participants/${PARTICIPANTS[0].address}`)
      if (res.status !== 503 || res.headers.get('retry-after') === null) return String(res.status)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return 'shed'
  })().catch((err: Error) => err.name)
  await until(() => sim.count(ONE) > 0, 'the request to reach the chain')
  // Wrapped: an async function returning the promise itself would wait for it to settle.
  return { result: pending }
}

t.test('a second SIGTERM during the announcement exits 1 promptly', async (t) => {
  const { main } = await boot(t, { EDGE_API_DRAIN_ANNOUNCE: '1m' })
  main.child.kill('SIGTERM')
  await main.waitFor('announcing drain')
  const sent = Date.now()
  main.child.kill('SIGTERM')
  const { code } = await main.exited
  t.equal(code, 1)
  const forced = main.lines.find((l) => l.msg === 'closing remaining connections') as Record<string, unknown>
  t.match(forced, { level: 40, reason: 'operator sent SIGTERM during drain announcement' })
  const after = Date.parse(forced.time as string) - sent
  t.ok(after < 10_000, `forced ${after} ms after the second signal, not after the 1 m window`)
  t.notOk(main.lines.some((l) => l.msg === 'listener closed'), 'never waited for the window')
  t.match(main.lines.at(-1), { msg: 'exit', code: 1, reason: 'operator sent SIGTERM during drain announcement' })
})

t.test('a second SIGTERM during the shutdown exits 1 and cuts the hanging request', async (t) => {
  const { main, sim, origin } = await boot(t, { EDGE_API_DRAIN_ANNOUNCE: '0' })
  const hanging = await hangingRequest(sim, origin)
  t.equal(sim.count(ONE), 1, 'the request is on the chain')
  main.child.kill('SIGTERM')
  await main.waitFor('listener closed')
  main.child.kill('SIGTERM')
  const { code } = await main.exited
  t.equal(code, 1)
  t.match(main.lines.find((l) => l.msg === 'closing remaining connections'), { reason: 'operator sent SIGTERM during shutdown' })
  t.not(await hanging.result, '200', 'the hanging request was cut, not answered')
})

t.test('budget expiry with a request that never finishes: SIGINT → exit 1 at the budget, not later', async (t) => {
  const { main, sim, origin } = await boot(t, { EDGE_API_DRAIN_ANNOUNCE: '0', EDGE_API_SHUTDOWN_BUDGET: '1s' })
  const hanging = await hangingRequest(sim, origin)
  main.child.kill('SIGINT')
  const closed = await main.waitFor('listener closed')
  const { code } = await main.exited
  t.equal(code, 1)
  const forced = main.lines.find((l) => l.msg === 'closing remaining connections') as Record<string, unknown>
  t.match(forced, { reason: 'shutdown budget 1s expired' })
  // Announce 0: the budget is armed as the listener starts closing, right after the signal line.
  const signal = main.lines.find((l) => l.msg === 'shutdown signal') as Record<string, unknown>
  t.match(signal, { signal: 'SIGINT' })
  const afterSignal = Date.parse(forced.time as string) - Date.parse(signal.time as string)
  // Log times are whole milliseconds: a timer of 1000 ms can read as 999.
  t.ok(afterSignal >= 999, `forced ${afterSignal} ms after the signal: not before the budget of 1s`)
  t.ok(afterSignal < 10_000, `forced ${afterSignal} ms after the signal: at the budget, not when the chain times out (10 m)`)
  t.ok(Date.parse(closed.time as string) <= Date.parse(forced.time as string), 'the listener had closed before')
  t.not(await hanging.result, '200')
})
