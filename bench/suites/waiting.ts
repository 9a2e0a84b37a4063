// Benchmark 17: requests that wait for the chain (docs/waiting.md). What held long-polls cost a
// replica (RSS per held request, chain requests while they wait), and how soon after a block
// they are answered (200 waiters at the head; from the block landing on the simulator, so the
// head follower's cadence is part of it) at how many head polls a second.
import { readFile } from 'node:fs/promises'
import { Agent, request } from 'undici'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import type { SuiteResult } from '../lib/report.js'
import { startMain } from '../lib/servers.js'
import { percentile, round } from '../lib/stats.js'
import type { Context } from './context.js'

const ROUTE = '/v1/epochs/latest'
const WAKE_WAITERS = 200
const HEAD_POLL = '/cosmos/base/tendermint/v1beta1/blocks/latest'
/** The simulated chain's pace for the wake-up, and the blocks the head follower learns it in. */
const BLOCK_MS = 1000
const LEARNING = 3
// The replica caps held requests per client address (1,024): the held ones come from many.
const PER_ADDRESS = 1000
// Connections opened at once: a burst of 10,000 overflows the listen backlog (511).
const RAMP = 500

async function rssMb (pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024
}

async function pause (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

export async function waiting (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const held = ctx.runS <= 1 ? 1000 : 10_000
  // Its own simulator, in this process: the test lands each block at a moment it knows.
  const sim = await startChainSimulator()
  const edge = await startMain(sim.url, { EDGE_API_CACHE_SIZE: '64MiB' })
  const agents = Array.from({ length: Math.ceil(held / PER_ADDRESS) }, (_, i) => new Agent({ connections: null, pipelining: 0, connect: { localAddress: `127.0.0.${i + 1}` } }))
  try {
    const ask = (height: number, i = 0): Promise<number> => request(`${edge.url}${ROUTE}?afterHeight=${height}&wait=30`, { dispatcher: agents[Math.floor(i / PER_ADDRESS)] })
      .then(async (res) => { await res.body.dump(); return performance.now() })
    await ask(0)
    const idle = await rssMb(edge.pid)
    const head = sim.clock.height
    const before = sim.requests.length
    const many: Array<Promise<number>> = []
    for (let i = 0; i < held; i++) {
      many.push(ask(head, i))
      if (i % RAMP === RAMP - 1) await pause(100)
    }
    await pause(3000)
    const holding = await rssMb(edge.pid)
    const during = sim.requests.slice(before)
    const reads = during.filter((path) => !path.startsWith(HEAD_POLL)).length
    const afterHold = sim.requests.length
    sim.clock.advance()
    await Promise.all(many)
    const wakeReads = sim.requests.slice(afterHold).filter((path) => !path.startsWith(HEAD_POLL)).length

    // The wake-up on a chain with a steady pace (a block every BLOCK_MS, as a chain's), so the
    // head follower learns it (LEARNING blocks, not measured) and polls fast only when a block
    // is due; the node's head polls counted over the measured blocks.
    const latencies: number[] = []
    const paced = performance.now()
    let pollsFrom = 0
    let measuredFrom = 0
    for (let block = 0; block < LEARNING + ctx.rounds; block++) {
      if (block === LEARNING) { pollsFrom = sim.count(HEAD_POLL); measuredFrom = performance.now() }
      const height = sim.clock.height
      const waiters = Array.from({ length: WAKE_WAITERS }, async () => await ask(height))
      await pause(paced + (block + 1) * BLOCK_MS - performance.now())
      const landed = performance.now()
      sim.clock.advance()
      const answered = await Promise.all(waiters)
      if (block >= LEARNING) for (const at of answered) latencies.push(at - landed)
    }
    const pollsPerS = (sim.count(HEAD_POLL) - pollsFrom) / ((performance.now() - measuredFrom) / 1000)
    latencies.sort((a, b) => a - b)
    const perHeldKb = (holding - idle) * 1024 / held
    return {
      name: 'waiting',
      seconds: (performance.now() - started) / 1000,
      raw: { held, idleMb: idle, holdingMb: holding, perHeldKb, readsWhileHeld: reads, headPolls: during.length - reads, wakeReads, latencies, wakeHeadPollsPerS: pollsPerS },
      rows: [{
        item: '17',
        what: `RSS of ${held.toLocaleString('en')} long-polls held on one replica (idle ${round(idle, 1)} MB → ${round(holding, 1)} MB)`,
        value: `${round(perHeldKb, 1)} KB each`,
        goal: 'stated (docs/waiting.md)',
        met: null
      }, {
        item: '17',
        what: `chain reads while they wait 3 s (besides ${during.length - reads} head polls), and when one block wakes them all`,
        value: `${reads}, then ${wakeReads}`,
        goal: '0, then one per route per block',
        met: reads === 0 && wakeReads <= 1
      }, {
        item: '17',
        what: `wake-up after a block, ${WAKE_WAITERS} waiters at the head (${ctx.rounds} blocks, one a second; p50 ${round(percentile(latencies, 0.5), 1)} ms; ${round(pollsPerS, 1)} head polls/s, the budget 5)`,
        value: `p99 ${round(percentile(latencies, 0.99), 1)} ms`,
        goal: '< 50 ms',
        met: percentile(latencies, 0.99) < 50
      }]
    }
  } finally {
    await Promise.all(agents.map(async (agent) => await agent.close()))
    await edge.stop()
    await sim.close()
  }
}
