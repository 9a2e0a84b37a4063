// `flock /tmp/edge-heavy.lock npx tsx bench/pool-window.ts [seconds]` (after npm run build):
// how long after one replica of the pool first serves a new block another replica can still
// serve the block before it (issue 34: "never backwards across the pool … within a stated
// bound for requests a few milliseconds apart"). The pool of harness/pool.ts (three
// replicas of dist/main.js, two chain nodes one block apart, a block a second), without and
// with the shared tier, alternating. One client per replica reads /v1/epochs/latest from it
// directly, one read after the other, and every answer's time and X-Block-Height is kept.
// For each block H: from the first answer at H anywhere, the last answer below H anywhere
// after it; the gap is the window in which a client moving between replicas could go back.
import { Agent, request } from 'undici'
import { LATEST_EPOCH_PATH, startPool } from '../harness/pool.js'

interface Read { readonly at: number, readonly height: number }

async function readAll (ports: number[], durationMs: number): Promise<Read[]> {
  const agent = new Agent({ connections: 1 })
  const reads: Read[] = []
  const deadline = performance.now() + durationMs
  await Promise.all(ports.map(async (port) => {
    while (performance.now() < deadline) {
      const answer = await request(`http://127.0.0.1:${port}${LATEST_EPOCH_PATH}`, { dispatcher: agent })
      await answer.body.dump()
      // The answer's time is when it arrived: a read at H that arrives before one below H.
      if (answer.statusCode === 200) reads.push({ at: performance.now(), height: Number(answer.headers['x-block-height']) })
    }
  }))
  await agent.close()
  return reads
}

/** Per block: ms from its first answer anywhere to the last older answer anywhere after it (blocks with none: 0). */
function windows (reads: Read[]): number[] {
  const firstAt = new Map<number, number>()
  for (const read of reads) if (!firstAt.has(read.height) || (firstAt.get(read.height) as number) > read.at) firstAt.set(read.height, read.at)
  return [...firstAt].map(([height, first]) => {
    const older = reads.filter((r) => r.height < height && r.at > first)
    return older.length === 0 ? 0 : Math.max(...older.map((r) => r.at)) - first
  })
}

function pct (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number
}

async function main (): Promise<void> {
  const seconds = Number(process.argv[2] ?? 20)
  for (const store of [false, true, true, false]) {
    const pool = await startPool({ replicas: 3, store, blockMs: 1000 })
    try {
      const reads = await readAll(pool.replicas.map((r) => r.port), seconds * 1000)
      const w = windows(reads).sort((a, b) => a - b)
      const open = w.filter((x) => x > 0).length
      console.log(`${store ? 'store   ' : 'no store'}  reads ${reads.length}  blocks ${w.length}  blocks with an older answer after the first new one ${open}  window p50 ${pct(w, 0.5).toFixed(1)} ms  p90 ${pct(w, 0.9).toFixed(1)} ms  max ${(w.at(-1) as number).toFixed(1)} ms`)
    } finally {
      await pool.stop()
    }
  }
}

main().catch((err: unknown) => { console.error(err); process.exitCode = 1 })
