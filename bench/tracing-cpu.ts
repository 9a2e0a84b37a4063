// CPU per request of dist/main.js processes, tracing on (every request sampled, OTLP/HTTP
// protobuf to a collector stand-in in this process that answers every export), on with a
// tenth of the traces sampled (tenth: parentbased_traceidratio 0.1, the docs' recommendation),
// on with no request sampled (always_off: the cost of the hooks alone), or off, side by
// side in alternating rounds (the order rotates each round): a quicker, focused subset of
// bench 12's first part, which also takes other builds, e.g. the commit before a change.
//   npx tsx bench/tracing-cpu.ts off=dist/main.js:off on=dist/main.js:on before=/tmp/base/dist/main.js:on tenth=dist/main.js:tenth
//   (BPATH=/v1/status or a participant path, ROUNDS=9, RUN_S=2)
// Prints each side's median µs per request and the median of each round's ratio to the first side
// (OUT=file also writes every round's figures as JSON).
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PARTICIPANTS } from '../harness/chain-simulator/data/participants.js'
import { Load } from './lib/load.js'
import { cpuMs, type MainProcess, startMain, startSim } from './lib/servers.js'
import { median } from './lib/stats.js'

const specs = process.argv.slice(2).map((arg) => {
  const match = /^([^=]+)=(.+):(on|off|always_off|tenth)$/.exec(arg)
  if (match === null) throw new Error(`usage: npx tsx bench/tracing-cpu.ts label=path/to/main.js:on|off|always_off|tenth …  (got ${arg})`)
  const mode = match[3] as string
  return { label: match[1] as string, main: match[2] as string, sampler: mode === 'on' ? 'always_on' : mode === 'off' ? undefined : mode === 'tenth' ? 'parentbased_traceidratio' : mode }
})
if (specs.length < 2) throw new Error('give at least two sides')

const sink = createServer((req, res) => {
  req.resume()
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end())
})
sink.listen(0, '127.0.0.1')
await once(sink, 'listening')
const collector = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`

const sim = await startSim()
const load = await Load.start()
// startMain's settings (the answer cache off: chain reads reach the chain, as in bench 12),
// with no delay-based shedding: a saturated run measures the work (bench 12's shedding off).
async function start (main: string, sampler: string | undefined): Promise<MainProcess> {
  const tracing: Record<string, string> = sampler === undefined ? {} : { EDGE_API_OTEL_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: collector, OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: '0.1' }
  return await startMain(sim.url, { EDGE_API_SHED_DELAY: '0', ...tracing }, 'ignore', main)
}

const sides = await Promise.all(specs.map(async (spec) => ({ ...spec, server: await start(spec.main, spec.sampler) })))
const path = process.env.BPATH ?? '/v1/status'
const paths = path === 'participants' ? PARTICIPANTS.map((p) => `/v1/participants/${p.address}`) : [path]
const runS = Number(process.env.RUN_S ?? 2)
// RATE=n: every side at once, n requests/s each (open loop, one generator per side), so the
// machine's load of the moment falls on all sides alike; otherwise one side at a time, as many
// requests as 10 connections get answered (closed loop, bench 12's way).
const rate = Number(process.env.RATE ?? 0)
const generators = rate > 0 ? await Promise.all(sides.map(async () => await Load.start())) : []
const cpu = new Map(sides.map((side) => [side.label, [] as number[]]))
let failed = 0
for (let round = 0; round < Number(process.env.ROUNDS ?? 9); round++) {
  if (rate > 0) {
    const run = async (durationS: number) => await Promise.all(sides.map(async (side, i) => await (generators[i] as Load).open({ origin: side.server.url, paths, rate, durationS, connections: 20 })))
    await run(1)
    const before = await Promise.all(sides.map(async (side) => await cpuMs(side.server.pid)))
    const results = await run(runS)
    const after = await Promise.all(sides.map(async (side) => await cpuMs(side.server.pid)))
    sides.forEach((side, i) => {
      const result = results[i] as Awaited<ReturnType<Load['open']>>
      const ok = Object.entries(result.statusCodes).reduce((n, [code, count]) => n + (code.startsWith('2') ? count : 0), 0)
      failed += result.scheduled - ok
      cpu.get(side.label)?.push(((after[i] as number) - (before[i] as number)) * 1000 / ok)
    })
    continue
  }
  const order = sides.map((_, i) => sides[(i + round) % sides.length] as typeof sides[number])
  for (const side of order) {
    await load.run({ url: side.server.url, paths, connections: 10, durationS: 1 })
    const before = await cpuMs(side.server.pid)
    const result = await load.run({ url: side.server.url, paths, connections: 10, durationS: runS })
    cpu.get(side.label)?.push((await cpuMs(side.server.pid) - before) * 1000 / result.requests)
    failed += result.errors + result.non2xx
  }
}
const first = cpu.get((sides[0] as typeof sides[number]).label) as number[]
for (const side of sides) {
  const values = cpu.get(side.label) as number[]
  const ratios = values.map((v, i) => v / (first[i] as number))
  console.log(`${path} ${side.label}: ${median(values).toFixed(1)} µs CPU/request; / ${sides[0]?.label} ${median(ratios).toFixed(3)} (rounds ${ratios.map((r) => r.toFixed(2)).join(' ')})`)
}
console.log(`failed or non-2xx: ${failed}`)
// OUT=file: each side's per-round µs as JSON, for ratios between any two sides (round by round).
if (process.env.OUT !== undefined) writeFileSync(process.env.OUT, JSON.stringify({ path, rate, runS, cpu: Object.fromEntries(cpu) }))
for (const side of sides) await side.server.stop()
await load.stop()
for (const generator of generators) await generator.stop()
await sim.stop()
sink.close()
