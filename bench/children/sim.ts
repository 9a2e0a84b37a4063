// The chain simulator (harness/chain-simulator) in its own process, with its knobs and counters
// reachable over IPC.
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { serveCommands } from '../lib/ipc.js'

const sim = await startChainSimulator()

serveCommands({ url: sim.url, pid: process.pid }, {
  count: ({ prefix }: { prefix?: string }) => sim.count(prefix),
  reset: () => { sim.resetCounts() },
  latency: ({ ms, prefix }: { ms: number, prefix?: string }) => { sim.latency(ms, prefix) },
  slow: ({ ms, every, prefix }: { ms: number, every: number, prefix?: string }) => { sim.slow(ms, every, prefix) },
  clear: () => { sim.clearFaults() },
  // A real node's cost and a block clock (benchmark 14); undefined / 0 turn them off again.
  capacity: ({ costMs, concurrency }: { costMs?: number, concurrency?: number }) => {
    sim.capacity(costMs === undefined || concurrency === undefined ? undefined : { costMs, concurrency })
  },
  blockEvery: ({ ms }: { ms: number }) => {
    if (ms > 0) sim.clock.every(ms)
    else sim.clock.stop()
  },
  height: () => sim.head
})
