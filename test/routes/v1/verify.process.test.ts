import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { request } from 'undici'
import { VERIFY_BLOCK_BODY_LIMIT } from '../../../src/routes/v1/verify-block.js'
import { VERIFY_TASK_TIME_LIMIT_MS } from '../../../src/routes/v1/verify-work.js'
import { HUNDRED_COMMIT_BLOCK, setAt, signedBlockAnswer } from '../../../harness/chain-simulator/data/commits.js'
import { CURRENT_EPOCH } from '../../../harness/chain-simulator/data/epochs.js'
import { startChainSimulator } from '../../../harness/chain-simulator/simulator.js'
import { serveMain } from '../../fixtures/serve-main.js'
import { type MainProcess } from '../../../harness/main-process.js'
import { amplifiedProofBody, deepArrayBody, deepBlockBody } from '../../fixtures/verify/hostile.js'
import { until } from '../../../harness/wait.js'

// The optional routes in the built service as deployed (dist/main.js: no TypeScript loader,
// whose hundreds of MB would swamp a memory measurement), over real sockets.
t.setTimeout(300_000)

async function boot (t: Test, env: Record<string, string> = {}): Promise<{ main: MainProcess, origin: string }> {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  return await serveMain(t, [sim], { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true', EDGE_API_LOG_LEVEL: 'debug', ...env })
}

const post = async (origin: string, path: string, body: string): Promise<number> => (await answer(origin, path, body)).status

const answer = async (origin: string, path: string, body: string): Promise<{ status: number, message: string }> => {
  const res = await request(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  const text = await res.body.text()
  return { status: res.statusCode, message: text }
}

/** VmRSS and VmHWM (the peak) of a process, in MB. */
function memory (pid: number): { rss: number, peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 }
}

t.test('SIGTERM with hostile requests in flight exits 0 within the announcement and the task time limit', async (t) => {
  // The landed code left the deep bodies' tasks unsettled: the drain waited out its budget and exited 1.
  const { main, origin } = await boot(t, { EDGE_API_DRAIN_ANNOUNCE: '0', EDGE_API_SHUTDOWN_BUDGET: '60s' })
  const hostile = [
    answer(origin, '/v1/verify-block', deepBlockBody(4000, 1_100_000)),
    answer(origin, '/v1/verify-block', deepBlockBody(5000, 1_100_000)),
    answer(origin, '/v1/verify-block', deepArrayBody(600_000)),
    answer(origin, '/v1/verify-proof', JSON.stringify(amplifiedProofBody(CURRENT_EPOCH)))
  ].map(async (p) => await p.catch((err: Error) => ({ status: err.name, message: err.message })))
  await until(() => main.lines.filter((l) => l.msg === 'incoming request').length >= hostile.length, 'the requests to arrive')
  const signalled = performance.now()
  main.child.kill('SIGTERM')
  const { code, at } = await main.exited
  t.equal(code, 0)
  const took = at - signalled
  // The landed code waited out the 60 s budget; 15 s of slack is for a machine starved of CPU
  // (at 8 test files at once it took 10.3 s).
  t.ok(took < VERIFY_TASK_TIME_LIMIT_MS + 15_000, `exited ${Math.round(took)} ms after SIGTERM (announce 0, task time limit ${VERIFY_TASK_TIME_LIMIT_MS} ms)`)
  // Each refused (400), or, on a machine starved of CPU, stopped at the task's time limit (the
  // route's own 503 saying so): answered before the exit either way, none left unsettled.
  const answers = await Promise.all(hostile)
  t.ok(answers.every((a) => a.status === 400 || (a.status === 503 && /took longer than its time limit/.test(a.message))),
    `each answered 400 (or 503 at its time limit) before the exit: ${JSON.stringify(answers.map((a) => a.status === 400 ? 400 : a))}`)
  t.notOk(main.lines.some((l) => l.level === 50), 'no error logged')
})

t.test('memory: two maximum-size verify-block bodies in flight stay well inside the 512 Mi pod limit', async (t) => {
  const { main, origin } = await boot(t)
  const pid = main.child.pid as number
  const block = (signedBlockAnswer(HUNDRED_COMMIT_BLOCK) as { sdk_block: Record<string, unknown> }).sdk_block
  const validators = setAt(HUNDRED_COMMIT_BLOCK - 1).map((v) => ({ pub_key: v.pubKey.toString('base64'), voting_power: String(v.power) }))
  const small = JSON.stringify({ block, validators })
  // A block at the body limit: its transactions, 1 MB of base64 each.
  const tx = 'QUFB'.repeat(256 * 1024)
  const txs = Math.floor((VERIFY_BLOCK_BODY_LIMIT - small.length - 1024) / (tx.length + 3))
  const large = JSON.stringify({ block: { ...block, data: { txs: Array.from({ length: txs }, () => tx) } }, validators })
  t.ok(large.length > VERIFY_BLOCK_BODY_LIMIT - 2 * 1024 * 1024 && large.length <= VERIFY_BLOCK_BODY_LIMIT, `${(large.length / 2 ** 20).toFixed(1)} MiB`)
  // The first task starts the worker thread, which on a loaded machine can outlast the task's
  // time limit (a 503 saying so): asked again until one answers 200, as a client would.
  await until(async () => await post(origin, '/v1/verify-block', small) === 200, 'a small block verified (the worker started)', { timeoutMs: 60_000, intervalMs: 100 })
  const before = memory(pid)
  const verify = async (): Promise<{ status: number, message: string }> => {
    const res = await request(`${origin}/v1/verify-block`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: large })
    return { status: res.statusCode, message: await res.body.text() }
  }
  const answers = await Promise.all([verify(), verify()])
  const after = memory(pid)
  // 200 each on a machine with the CPU to spare (this whole file takes ~3.5 s here, idle). At
  // load 8–9 (four test files at once beside two CPU burners) both outlasted
  // VERIFY_TASK_TIME_LIMIT_MS in 3 tries of 3, and a 503 saying so is the route's own answer:
  // the machine's speed is not what this test asserts, the memory of both bodies in flight is.
  // (A check stopped at its limit may not have reached its peak: a loaded run's figure is a
  // lower bound, an idle run's the whole check.)
  const timeLimit = /took longer than its time limit/
  t.ok(answers.every((a) => a.status === 200 || (a.status === 503 && timeLimit.test(a.message))), `each verified, or stopped at its time limit: ${JSON.stringify(answers.map((a) => a.status === 200 ? 200 : a))}`)
  // Measured here (2 cores, shared, load ~10): peak 335-395 MB (bench/verify-memory.ts: median
  // 345 MB, the landed code 372 MB without verifying). 448 MB leaves the 512 Mi limit 89 MB.
  t.ok(after.peak < 448, `RSS ${before.rss.toFixed(0)} MB before, peak ${after.peak.toFixed(0)} MB with two ${(large.length / 2 ** 20).toFixed(1)} MiB bodies, ${after.rss.toFixed(0)} MB after`)
})
