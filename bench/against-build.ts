// This build (dist/main.js) against another commit's build: CPU per request of the server
// process at saturation, the two sides alternating round by round, each side's default
// configuration (the answer cache on). What a change to the request path costs: issue 20's
// "tracing off identical to today", issue 34/35's hooks (the minimum height, the shared tier
// off, the clock) against the round's base.
//   git worktree add /tmp/edge-baseline <commit> && (cd /tmp/edge-baseline && npm ci && npm run build)
//   npx tsx bench/against-build.ts /tmp/edge-baseline/dist/main.js   (BPATH=/v1/... ROUNDS=8 BLOG=info)
// BCURRENT: this side's main.js (a copy of a build, so that src/ may change meanwhile).
// BLOG: both sides' EDGE_API_LOG_LEVEL (warn by default, as benchmark 1): at info every answer
// also writes its access line (to /dev/null).
import { Load } from './lib/load.js'
import { cpuMs, startMain, startSim } from './lib/servers.js'
import { median } from './lib/stats.js'

const baselineMain = process.argv[2]
if (baselineMain === undefined) throw new Error('usage: npx tsx bench/against-build.ts <baseline dist/main.js>')
const sim = await startSim()
const load = await Load.start()
// Each side's default answer cache (startMain turns it off for benchmarks 1–13).
const start = async (main?: string) => startMain(sim.url, { EDGE_API_CACHE_SIZE: '64MiB', EDGE_API_LOG_LEVEL: process.env.BLOG ?? 'warn' }, 'ignore', main)
const sides = { baseline: await start(baselineMain), current: await start(process.env.BCURRENT) }
const path = process.env.BPATH ?? '/v1/status'
const out: Record<string, number[]> = { baseline: [], current: [] }
const shed: Record<string, number> = { baseline: 0, current: 0 }
for (let round = 0; round < Number(process.env.ROUNDS ?? 8); round++) {
  for (const name of (round % 2 === 0 ? ['baseline', 'current'] : ['current', 'baseline'])) {
    const s = sides[name as 'current']
    await load.run({ url: `${s.url}${path}`, connections: 10, durationS: 1 })
    const before = await cpuMs(s.pid)
    const r = await load.run({ url: `${s.url}${path}`, connections: 10, durationS: 2 })
    out[name]!.push((await cpuMs(s.pid) - before) * 1000 / r.requests)
    shed[name]! += r.non2xx
  }
}
const ratios = out.current!.map((v, i) => v / out.baseline![i]!)
console.log(`${path}${process.env.BLOG === undefined ? '' : ` at ${process.env.BLOG}`}: CPU µs/request baseline ${median(out.baseline!).toFixed(1)} / this build ${median(out.current!).toFixed(1)}; median pair ratio this build/baseline ${median(ratios).toFixed(3)} (pairs ${ratios.map((x) => x.toFixed(2)).join(' ')}); non-2xx ${JSON.stringify(shed)}`)
for (const s of Object.values(sides)) await s.stop()
await load.stop(); await sim.stop()
