// The process's RSS with two maximum-size POST /v1/verify-block bodies in flight (issue 16),
// for one or more builds side by side, alternating, several runs each:
//   npm run build && npx tsx bench/verify-memory.ts dist [/path/to/other/dist ...] [--runs=3]
// Each run starts `node <dist>/main.js` over a chain simulator, verifies one small block (the
// worker thread is started), then posts two 31 MiB bodies (a 100-validator block padded with
// transactions) at once and reads VmHWM, the peak RSS, from /proc.
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { request } from 'undici'
import { HUNDRED_COMMIT_BLOCK, setAt, signedBlockAnswer } from '../harness/chain-simulator/data/commits.js'
import { startChainSimulator } from '../harness/chain-simulator/simulator.js'
import { spawnMain } from '../harness/main-process.js'

const BODY_LIMIT = 32 * 1024 * 1024
const args = process.argv.slice(2)
const runs = Number(args.find((a) => a.startsWith('--runs='))?.slice(7) ?? 3)
const dists = args.filter((a) => !a.startsWith('--')).map((d) => resolve(d))
if (dists.length === 0) dists.push(resolve('dist'))

const block = (signedBlockAnswer(HUNDRED_COMMIT_BLOCK) as { sdk_block: Record<string, unknown> }).sdk_block
const validators = setAt(HUNDRED_COMMIT_BLOCK - 1).map((v) => ({ pub_key: v.pubKey.toString('base64'), voting_power: String(v.power) }))
const small = JSON.stringify({ block, validators })
const tx = 'QUFB'.repeat(256 * 1024)
const txs = Math.floor((BODY_LIMIT - small.length - 1024) / (tx.length + 3))
const large = JSON.stringify({ block: { ...block, data: { txs: Array.from({ length: txs }, () => tx) } }, validators })

function memory (pid: number): { rss: number, peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) }
}

async function post (origin: string, body: string): Promise<number> {
  const res = await request(`${origin}/v1/verify-block`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  await res.body.dump()
  return res.statusCode
}

async function run (dist: string): Promise<{ before: number, peak: number, statuses: number[] }> {
  const sim = await startChainSimulator()
  const main = spawnMain({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_METRICS_PORT: 'off', EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' }, { stderr: 'inherit', main: `${dist}/main.js` })
  const { child } = main
  const origin = `http://127.0.0.1:${await main.port()}`
  try {
    // (The landed code of issue 16 answers 499 over a socket, but parses the bodies all the same.)
    await post(origin, small)
    const before = memory(child.pid as number).rss
    const statuses = await Promise.all([post(origin, large), post(origin, large)])
    return { before, peak: memory(child.pid as number).peak, statuses }
  } finally {
    child.kill('SIGKILL')
    await once(child, 'exit')
    await sim.close()
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const results = new Map(dists.map((d) => [d, [] as number[]]))
console.log(`two ${(large.length / 2 ** 20).toFixed(1)} MiB bodies at once, ${runs} runs per build, alternating`)
for (let i = 0; i < runs; i++) {
  for (const dist of dists) {
    const r = await run(dist)
    results.get(dist)?.push(r.peak)
    console.log(`${dist}: RSS ${r.before} MB before, peak ${r.peak} MB, answers ${r.statuses.join(' ')}`)
  }
}
for (const [dist, peaks] of results) console.log(`${dist}: median peak ${median(peaks)} MB (${peaks.join(', ')})`)
