import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { requireTool } from '../fixtures/deploy/tools.js'
import { poll, startPool, type Pool, type PollTotals } from '../../harness/pool.js'

// Issue 34's and issue 40's done-when, over real sockets: three replicas of dist/main.js behind
// the router template's HAProxy, two nodes of one chain (the second a block behind), a block a
// second, twelve clients each on its own connection reading /v1/epochs/latest one read after
// the other and sending nothing special. The store (a password, signed answers, as shipped)
// starts 1 s after the replicas (each has by then read alone), as compose and Kubernetes may start it: once it is up, reads go
// backwards across the pool as rarely as with it first (BACKWARDS_AT_MOST: fewer, not none) and
// the chain is asked about once per block, the replicas'
// concurrent misses settled by the claim; the store killed, restarted empty, frozen, thawed
// and flushed under that load fails no read. The same pool without the store is
// bench/shared-tier.ts.

const POLLERS = 12
const BLOCK_MS = 1000

function report (t: Test, name: string, totals: PollTotals): void {
  t.comment(`${name}: ${totals.reads} reads over ${totals.blocks} blocks, ${totals.backwards} backwards, ${totals.failed} failed, ` +
    `${totals.epochInfoPerBlock.toFixed(2)} epoch_info requests per block, p50 ${totals.p50.toFixed(1)} ms p99 ${totals.p99.toFixed(1)} ms`)
  for (const failure of totals.failures) t.comment(`  failed: ${failure}`)
}

async function pool (t: Test, storeStartsLate = false): Promise<Pool | undefined> {
  if (!requireTool(t, 'haproxy', 'the shared tier\'s pool test') || !requireTool(t, 'redis-server', 'the shared tier\'s pool test')) return undefined
  // The store late: sharing is what is measured, so a deadline a loaded CI machine's CPU cannot
  // miss (a missed one counts as the store's absence). The faults' test keeps the replicas' own.
  const started = await startPool({ replicas: 3, store: true, blockMs: BLOCK_MS, storeStartsLate, ...(storeStartsLate ? { storeTimeout: '250ms' } : {}) })
  t.teardown(() => started.stop())
  return started
}

/**
 * Reads a block back that the pool still allows once the store is up: a read that reaches a
 * replica before the hint of another's newer head does, or whose look at it outlasts the 50 ms
 * it waits (docs/shared-tier.md, "fewer, not none"). Measured with the store started late: 0 of
 * 21,407 and 1 of 50,522 in the suite's serial part, 3 of 4,783 beside a busy core, 2 of 1,833
 * in a suite run beside four other jobs; without the store, or with round 4's subscription that
 * never followed a late store, 9-16%. The bound is a guard, not the figure (that is benchmark
 * 15's, bench/shared-tier.ts): 1 in 100, over ten times what a loaded machine showed and ten
 * times under what the pool does without what this guards.
 */
const BACKWARDS_AT_MOST = 1 / 100

t.test('the store started 1 s after the replicas: once it is up, reads go backwards as rarely as with it first, and the chain is asked about once per block', async (t) => {
  const stack = await pool(t, true)
  if (stack === undefined) return
  await sleep(1000)
  const started = performance.now()
  await stack.startStore()
  t.comment(`every replica sharing ${(performance.now() - started).toFixed(0)} ms after the store was started`)
  // 5 s: five blocks, each a chance for a read to go backwards and for the replicas to race to
  // the chain (hundreds to thousands of reads: the bound below is 1 in 100). Without what each guards, a
  // block is enough to see it: 9-16% of reads backwards, ~3 epoch_info reads a block. Eight
  // blocks were three more seconds of this ALONE file, the suite's own (issue 54).
  const totals = await poll(stack, { pollers: POLLERS, durationMs: 5000 })
  report(t, 'store started late', totals)
  // How many is the machine's (tens of thousands when quiet, 1,247 in 8 s at load average 30, 342
  // in 5 s at 19): asserted, each poller reading in every block, which a stalled pool does not.
  t.ok(totals.reads >= POLLERS * totals.blocks, `the pollers kept reading (${totals.reads} reads over ${totals.blocks} blocks)`)
  t.equal(totals.failed, 0, 'no read failed')
  t.ok(totals.backwards <= BACKWARDS_AT_MOST * totals.reads, `${totals.backwards} of ${totals.reads} reads older than one the client had read before: at most 1 in 100 (the old subscription: 10.6%)`)
  t.ok(totals.epochInfoPerBlock <= 1.2, `≤ 1.2 epoch_info requests per block (${totals.epochInfoPerBlock.toFixed(2)}; each replica building its own, as with claim() always true: ~3)`)
})

t.test('the store killed, restarted empty, frozen, thawed and flushed under load: 0 failed reads, shared again within 3 s', async (t) => {
  const stack = await pool(t)
  if (stack === undefined) return
  const redis = stack.redis
  if (redis === undefined) throw new Error('a pool with a store has one')
  /** When each replica last logged the store up, after `since` (epoch ms). */
  const upAgain = async (since: number): Promise<number> => {
    const times = await Promise.all(stack.replicas.map(async (r) =>
      Date.parse((await r.waitFor((l) => l.msg?.startsWith('shared store up') === true && Date.parse(String(l.time)) >= since, 'the store up again')).time as string)))
    return Math.max(...times) - since
  }
  const recoveries: string[] = []
  // The pollers pause 50 ms after each read (~200 reads a second in all, 3 000 in the run): load
  // enough to meet every phase many times over, without the first test's tight loop, whose
  // CPU the rest of the suite pays for.
  // Each phase a second or two, but the freeze three: a replica asks the store only on a local
  // miss (a new block's answer, a block a second), and is judged unresponsive only after
  // several reads past their deadline; at 2 s a replica could meet too few and never be
  // unresponsive, so never 'up again' after the thaw (seen: two of three replicas).
  const breakTheStore = async (): Promise<void> => {
    await sleep(1000)
    await redis.kill()
    await sleep(1000)
    let since = Date.now()
    await redis.restart()
    recoveries.push(`restarted empty: every replica up again ${await upAgain(since)} ms after the restart began`)
    await sleep(1000)
    redis.freeze()
    await sleep(3000)
    since = Date.now()
    redis.thaw()
    recoveries.push(`thawed after 3 s frozen: every replica up again ${await upAgain(since)} ms after`)
    await sleep(1000)
    await (await redis.admin()).flushAll()
  }
  const totals = await poll(stack, { pollers: POLLERS, durationMs: 9000, pauseMs: 50, during: breakTheStore })
  report(t, 'store killed, restarted, frozen, flushed', totals)
  for (const line of recoveries) t.comment(line)
  t.equal(totals.failed, 0, 'no read failed')
  for (const line of recoveries) t.ok(Number(/(\d+) ms/.exec(line)?.[1]) <= 3000, line)
  for (const r of stack.replicas) {
    const states = r.lines.filter((l) => l.msg?.startsWith('shared store') === true).map((l) => String(l.msg).split(';')[0])
    t.ok(states.length <= 7, `one line per change of state (${states.join(', ')})`)
  }
})
