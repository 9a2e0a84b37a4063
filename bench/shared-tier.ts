// `flock /tmp/edge-heavy.lock npx tsx bench/shared-tier.ts [seconds]`: issue 34's pool with
// and without the shared tier, side by side (harness/pool.ts): three replicas of
// dist/main.js behind HAProxy, two chain nodes one block apart, a block a second, twelve
// pollers of /v1/epochs/latest, each on its own connection (the store with a password and
// signed answers, as shipped). Rounds alternate which side goes first; each
// prints reads backwards and epoch_info requests per block (BENCHMARKS.md, "Shared tier").
import { poll, startPool } from '../harness/pool.js'

async function main (): Promise<void> {
  const seconds = Number(process.argv[2] ?? 25)
  const sides = [false, true]
  for (let round = 0; round < 2; round++) {
    for (const store of round % 2 === 0 ? sides : [...sides].reverse()) {
      const pool = await startPool({ replicas: 3, store, blockMs: 1000 })
      try {
        const totals = await poll(pool, { pollers: 12, durationMs: seconds * 1000 })
        console.log(`${store ? 'store   ' : 'no store'}  reads ${totals.reads}  backwards ${totals.backwards} (${(100 * totals.backwards / totals.reads).toFixed(2)}%)  failed ${totals.failed}  epoch_info/block ${totals.epochInfoPerBlock.toFixed(2)} over ${totals.blocks} blocks  p50 ${totals.p50.toFixed(1)} ms  p99 ${totals.p99.toFixed(1)} ms`)
      } finally {
        await pool.stop()
      }
    }
  }
}

main().catch((err: unknown) => { console.error(err); process.exitCode = 1 })
