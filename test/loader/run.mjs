// `npm test` after the build: what tap needs before it starts, then tap, with tap-first.mjs
// first in every test process (it must come before the `--import`s tap puts on the command line,
// and only NODE_OPTIONS does). A file URL: no quoting, and a child in another directory finds it.
//
// The whole suite runs in two parts: every file but ALONE with tap's jobs in parallel (and the
// coverage check), then the ALONE files one at a time. Those make a load of their own and
// measure what it does (a heavy client of thousands of connections beside polite ones; 400
// long-pollers and streams across a rolling replacement; 200 waiters woken by one block): beside
// five other test files on two cores the replicas are starved by them, not by the load under
// test, and shed or lag for it (measured: 854 of the waiting clients' requests 503, the wake-up
// p99 1,051 ms against 23 ms alone). The last line sums both parts' counts
// in tap's own summary shape (what .ci/run reads). Files named on the command line run as asked.
import { spawn } from 'node:child_process'
import './warm-cache.mjs'
import './tap-build.mjs'

const ALONE = ['test/e2e/fair-share.test.ts', 'test/e2e/waiting.test.ts', 'test/http/long-poll-wake.process.test.ts']

const tapFirst = `--import=${new URL('./tap-first.mjs', import.meta.url).href}`
const env = { ...process.env, NODE_OPTIONS: `${tapFirst} ${process.env.NODE_OPTIONS ?? ''}`.trim() }

/** Runs tap with `args`, its output passed through; resolves with its exit code and the counts of its summary line. */
function tap (args) {
  return new Promise((resolve) => {
    const child = spawn('npx', ['tap', ...args], { stdio: ['inherit', 'pipe', 'inherit'], env })
    let tail = ''
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk)
      tail = (tail + chunk.toString('utf8')).slice(-4096)
    })
    child.on('exit', (code) => {
      const summary = [...tail.matchAll(/^# \{ (total: \d+[^}]*)\}/gm)].at(-1)?.[1] ?? ''
      const counts = Object.fromEntries([...summary.matchAll(/(\w+): (\d+)/g)].map(([, key, n]) => [key, Number(n)]))
      resolve({ code: code ?? 1, counts })
    })
  })
}

const asked = process.argv.slice(2)
if (asked.some((arg) => !arg.startsWith('-'))) {
  process.exitCode = (await tap(asked)).code
} else {
  const parallel = await tap([...asked, ...ALONE.map((file) => `--exclude=${file}`)])
  const alone = await tap([...asked, '--disable-coverage', '--jobs=1', ...ALONE])
  const total = {}
  for (const counts of [parallel.counts, alone.counts]) for (const [key, n] of Object.entries(counts)) total[key] = (total[key] ?? 0) + n
  process.stdout.write(`# { ${Object.entries(total).map(([key, n]) => `${key}: ${n}`).join(', ')} }\n`)
  process.exitCode = parallel.code !== 0 ? parallel.code : alone.code
}
