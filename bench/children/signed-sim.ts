// The chain simulator as a chain that signs its blocks (harness/chain-simulator/signed-chain.ts)
// in its own process, for the verified-reads benchmarks (20–22): `nodes` nodes of one signed
// chain with `validators` validators per set, sharing one block clock, and one more node two
// blocks behind them (its head is V = L − 2, the height a verifying replica proves at).
// Usage: signed-sim.ts <validators> <nodes>
import { BlockClock } from '../../harness/chain-simulator/block-clock.js'
import { SignedChain } from '../../harness/chain-simulator/signed-chain.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { serveCommands } from '../lib/ipc.js'

/** Blocks the trust root is below the head at start, as test/fixtures/light/verifying-service.ts sets it. */
const ROOT_BELOW_HEAD = 10
/** The behind node's lag: its head is the state a REST-only verifying replica proves (V = L − 2). */
const V_LAG = 2

const validators = Number(process.argv[2] ?? 4)
const nodeCount = Number(process.argv[3] ?? 1)
const clock = new BlockClock()
const chain = new SignedChain({ validators })
const nodes = []
for (let i = 0; i < nodeCount; i++) nodes.push(await startChainSimulator(0, { clock, chain }))
const behind = await startChainSimulator(0, { clock, chain, lag: V_LAG })
const all = [...nodes, behind]
const rootHeight = clock.height - ROOT_BELOW_HEAD
// Sign the blocks a replica reads first (the root and the head) before it asks for them.
chain.block(rootHeight + 1)
chain.block(clock.height)

serveCommands({
  urls: nodes.map((n) => n.url),
  behindUrl: behind.url,
  trustHeight: rootHeight,
  trustHash: Buffer.from(chain.block(rootHeight).blockId.hash).toString('hex'),
  validators: chain.validators,
  epochLength: chain.epochLength
}, {
  /** Requests under `prefix` over every node. */
  count: ({ prefix }: { prefix?: string }) => all.reduce((n, node) => n + node.count(prefix), 0),
  reset: () => { for (const node of all) node.resetCounts() },
  blockEvery: ({ ms }: { ms: number }) => {
    if (ms > 0) clock.every(ms)
    else clock.stop()
  },
  height: () => clock.height
})
