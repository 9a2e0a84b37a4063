// `npm test` after the build: what tap needs before it starts, then tap, with tap-first.mjs
// first in every test process (it must come before the `--import`s tap puts on the command line,
// and only NODE_OPTIONS does). A file URL: no quoting, and a child in another directory finds it.
import { spawn } from 'node:child_process'
import './warm-cache.mjs'
import './tap-build.mjs'

const tapFirst = `--import=${new URL('./tap-first.mjs', import.meta.url).href}`
const tap = spawn('npx', ['tap', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, NODE_OPTIONS: `${tapFirst} ${process.env.NODE_OPTIONS ?? ''}`.trim() }
})
tap.on('exit', (code) => { process.exitCode = code ?? 1 })
