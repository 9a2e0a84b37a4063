// `npm test` after the build: what tap needs before it starts, then tap, with tap-first.mjs
// first in every test process (it must come before the `--import`s tap puts on the command line,
// and only NODE_OPTIONS does). A file URL: no quoting, and a child in another directory finds it.
//
// The whole suite runs in two parts: every file but ALONE with tap's jobs in parallel (and the
// coverage check), then the ALONE files one at a time. Those make a load of their own and
// measure what it does (a heavy client of thousands of connections beside polite ones; 400
// long-pollers and streams across a rolling replacement; 200 waiters woken by one block; twelve
// pollers across a pool whose store starts late): beside five other test files on two cores the
// replicas are starved by them, not by the load under test, and shed or lag for it (measured:
// 854 of the waiting clients' requests 503, the wake-up p99 1,051 ms against 23 ms alone; the
// pool's replicas served 3 of 4,783 reads a block back in a run beside a busy core, as a look at
// a hinted head that outlasts the 50 ms a read waits for it can: docs/shared-tier.md). The last
// line sums both parts' counts in tap's own summary shape (what .ci/run reads). Files named on
// the command line run as asked.
import { spawn } from 'node:child_process'
import './warm-cache.mjs'
import './tap-build.mjs'

const ALONE = ['test/e2e/fair-share.test.ts', 'test/e2e/waiting.test.ts', 'test/waiting/long-poll-wake.process.test.ts', 'test/e2e/shared-tier.test.ts']

const tapFirst = `--import=${new URL('./tap-first.mjs', import.meta.url).href}`
const env = { ...process.env, NODE_OPTIONS: `${tapFirst} ${process.env.NODE_OPTIONS ?? ''}`.trim() }

/** Runs tap with `args`, its output passed through; resolves with its exit code, the counts of its summary line and its failures. */
function tap (args) {
  return new Promise((resolve) => {
    const child = spawn('npx', ['tap', ...args], { stdio: ['inherit', 'pipe', 'inherit'], env })
    let tail = ''
    const failures = new FailureLines()
    const times = new FileTimes()
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk)
      const text = chunk.toString('utf8')
      tail = (tail + text).slice(-4096)
      failures.read(text)
      times.read(text)
    })
    child.on('exit', (code) => {
      const summary = [...tail.matchAll(/^# \{ (total: \d+[^}]*)\}/gm)].at(-1)?.[1] ?? ''
      const counts = Object.fromEntries([...summary.matchAll(/(\w+): (\d+)/g)].map(([, key, n]) => [key, Number(n)]))
      resolve({ code: code ?? 1, counts, failures: failures.lines, times: times.files })
    })
  })
}

/**
 * Keeps each `not ok` line with the telling lines of the diagnostic under it (what was found and
 * wanted, where), so the end of the output names what failed: a CI log is often read by its last
 * lines only, and one failed assertion among ten thousand is otherwise far above them.
 */
class FailureLines {
  lines = []
  #partial = ''
  #inBlock = false

  read (text) {
    const lines = (this.#partial + text).split('\n')
    this.#partial = lines.pop()
    for (const line of lines) {
      if (/^\s*not ok /.test(line)) {
        this.lines.push(line)
        this.#inBlock = true
      } else if (!this.#inBlock || /^\s*(ok \d|# Subtest)/.test(line) || /^\s+\.\.\.$/.test(line)) {
        this.#inBlock = false
      } else if (/^\s+(found|wanted|message|fileName|lineNumber|[-+](?![\s-+]))/.test(line)) {
        this.lines.push(line)
      }
    }
  }
}

/**
 * Each test file's wall time, from the line tap's TAP reporter writes for it at the top level
 * (`ok 12 - test/a.test.ts # time=1234.5ms`): where the suite's time goes (docs/testing.md).
 */
class FileTimes {
  files = []
  #partial = ''

  read (text) {
    const lines = (this.#partial + text).split('\n')
    this.#partial = lines.pop()
    for (const line of lines) {
      const file = /^(?:not )?ok \d+ - (\S+) # time=([\d.]+)ms/.exec(line)
      if (file !== null) this.files.push({ file: file[1], ms: Number(file[2]) })
    }
  }
}

/** The `count` slowest files, slowest first: the suite's budget is 300 s (docs/testing.md). */
function slowest (files, count = 10) {
  if (files.length === 0) return
  const rows = [...files].sort((a, b) => b.ms - a.ms).slice(0, count)
  process.stdout.write(`\n# the ${rows.length} slowest test files:\n${rows.map(({ file, ms }) => `#   ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}`).join('\n')}\n`)
}

const asked = process.argv.slice(2)

/** Repeats every failure at the end, where a reader of the last lines sees it. */
function recap (failures) {
  if (failures.length > 0) process.stdout.write(`\n# what failed:\n${failures.map((line) => `# ${line}`).join('\n')}\n`)
}

if (asked.some((arg) => !arg.startsWith('-'))) {
  const run = await tap(asked)
  slowest(run.times)
  recap(run.failures)
  process.exitCode = run.code
} else {
  const parallel = await tap([...asked, ...ALONE.map((file) => `--exclude=${file}`)])
  const alone = await tap([...asked, '--disable-coverage', '--jobs=1', ...ALONE])
  slowest([...parallel.times, ...alone.times])
  recap([...parallel.failures, ...alone.failures])
  const total = {}
  for (const counts of [parallel.counts, alone.counts]) for (const [key, n] of Object.entries(counts)) total[key] = (total[key] ?? 0) + n
  process.stdout.write(`# { ${Object.entries(total).map(([key, n]) => `${key}: ${n}`).join(', ')} }\n`)
  process.exitCode = parallel.code !== 0 ? parallel.code : alone.code
}
