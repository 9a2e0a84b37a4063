// `npm run bench`: every benchmark side by side on loopback. Servers, the chain simulator
// and the load generator each run in their own process. Prints a table, writes JSON to
// bench/results/ and, after a full run, the table into BENCHMARKS.md.
//   --only=1,2,8   run some benchmarks only (nothing is recorded in BENCHMARKS.md);
//                  7 (undici pool tunings) runs only when asked for
//   --quick        short runs, to check the harness (nothing is recorded)
import { execFileSync } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { cpus, loadavg, totalmem } from 'node:os'
import { fileURLToPath } from 'node:url'
import { Load } from './lib/load.js'
import { table, type SuiteResult } from './lib/report.js'
import { hasMain, startSim } from './lib/servers.js'
import { round } from './lib/stats.js'
import { answerCache } from './suites/answer-cache.js'
import { chainRead } from './suites/chain-read.js'
import type { Context } from './suites/context.js'
import { fairness } from './suites/fairness.js'
import { fanout } from './suites/fanout.js'
import { hedging } from './suites/hedging.js'
import { lightFollow } from './suites/light-follow.js'
import { lifecycle } from './suites/lifecycle.js'
import { memory } from './suites/memory.js'
import { metrics } from './suites/metrics.js'
import { overhead } from './suites/overhead.js'
import { operatorProxy } from './suites/operator-proxy.js'
import { overload } from './suites/overload.js'
import { pool } from './suites/pool.js'
import { provenMiss } from './suites/proven-miss.js'
import { tracing } from './suites/tracing.js'
import { readiness } from './suites/readiness.js'
import { router } from './suites/router.js'
import { sharedTier } from './suites/shared-tier.js'
import { verifiedFollow } from './suites/verified-follow.js'
import { verifiedHits } from './suites/verified-hits.js'
import { verify } from './suites/verify.js'
import { waiting } from './suites/waiting.js'

const SUITES: ReadonlyArray<readonly [string, (ctx: Context) => Promise<SuiteResult>]> = [
  ['1', overhead], ['2', chainRead], ['3', fanout], ['4', readiness], ['5', lifecycle], ['6', memory], ['7', pool], ['8', verify], ['9', metrics],
  ['10', overload], ['11', router], ['12', tracing], ['13', hedging], ['14', answerCache], ['15', sharedTier], ['16', fairness], ['17', waiting], ['18', operatorProxy], ['19', lightFollow],
  ['20', verifiedFollow], ['21', provenMiss], ['22', verifiedHits]
]
const DEFAULT_SUITES = ['1', '2', '3', '4', '5', '6', '8', '9', '10', '11', '12', '13', '14', '15', '16', '17', '18', '19', '20', '21', '22']
const MARK_START = '<!-- bench:results:start -->'
const MARK_END = '<!-- bench:results:end -->'

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',')
const selected = SUITES.filter(([id]) => (only ?? DEFAULT_SUITES).includes(id))

const root = new URL('../', import.meta.url)
const ctxBase = quick
  ? { rounds: 2, runS: 1, warmupS: 0.3, memoryPhaseS: 5 }
  : { rounds: 3, runS: 2, warmupS: 0.4, memoryPhaseS: 60 }

function git (...gitArgs: string[]): string {
  try {
    return execFileSync('git', gitArgs, { cwd: fileURLToPath(root), encoding: 'utf8' }).trim()
  } catch {
    return 'unknown'
  }
}

const machine = {
  date: new Date().toISOString(),
  command: `npm run bench${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`,
  node: process.version,
  cores: cpus().length,
  cpu: cpus()[0]?.model ?? 'unknown',
  memoryGb: round(totalmem() / 2 ** 30, 1),
  commit: git('rev-parse', '--short', 'HEAD'),
  // The machine is shared: a high load average explains noisy figures.
  loadAverageAtStart: loadavg().map((v) => round(v, 2)),
  edgeEntry: hasMain() ? 'node dist/main.js' : 'dist/app.js in a bench child (dist/main.js missing)'
}

const started = performance.now()
const sim = await startSim()
const load = await Load.start()
const results: SuiteResult[] = []
try {
  for (const [id, suite] of selected) {
    process.stderr.write(`bench ${id}: ${suite.name}…\n`)
    try {
      results.push(await suite({ load, sim, ...ctxBase }))
    } catch (err) {
      // One broken benchmark must not lose the others' figures.
      process.stderr.write(`bench ${id} failed: ${(err as Error).stack ?? String(err)}\n`)
      results.push({ name: suite.name, rows: [{ item: id, what: `${suite.name} failed`, value: (err as Error).message.split('\n')[0] ?? '', goal: '', met: null }], raw: { error: String(err) }, seconds: 0 })
      await sim.clear()
    }
  }
} finally {
  await load.stop()
  await sim.stop()
}
const totalS = round((performance.now() - started) / 1000, 1)
const loadAverageAtEnd = loadavg().map((v) => round(v, 2))

const header = [
  `- command: \`${machine.command}\``,
  `- date: ${machine.date}, commit ${machine.commit}`,
  `- machine: ${machine.cores} cores (${machine.cpu}), ${machine.memoryGb} GB, Node ${machine.node}; ` +
    `load average (1/5/15 min) ${machine.loadAverageAtStart.join('/')} at start, ${loadAverageAtEnd.join('/')} at end`,
  `- edge-api ran as: ${machine.edgeEntry}`,
  `- benchmarks: ${results.map((r) => `${r.name} ${round(r.seconds, 1)} s`).join(', ')}; total ${totalS} s (plus the build)`
].join('\n')
const text = `${header}\n\n${table(results)}\n`
process.stdout.write(`\n${text}`)

const resultsDir = new URL('bench/results/', root)
await mkdir(resultsDir, { recursive: true })
const json = JSON.stringify({ machine, loadAverageAtEnd, totalS, suites: results }, null, 2)
await writeFile(new URL(`${machine.date.replace(/[:.]/g, '-')}.json`, resultsDir), json)
await writeFile(new URL('latest.json', resultsDir), json)

if (!quick && only === undefined) {
  const file = new URL('BENCHMARKS.md', root)
  const doc = await readFile(file, 'utf8').catch(() => `# Benchmarks\n\n${MARK_START}\n${MARK_END}\n`)
  const start = doc.indexOf(MARK_START)
  const end = doc.indexOf(MARK_END)
  if (start === -1 || end === -1) {
    process.stderr.write('BENCHMARKS.md has no results markers; table not recorded\n')
  } else {
    await writeFile(file, `${doc.slice(0, start + MARK_START.length)}\n${text}${doc.slice(end)}`)
    process.stderr.write('recorded in BENCHMARKS.md\n')
  }
}
