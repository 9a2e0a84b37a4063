import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type Server } from 'node:net'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { freePorts } from '../../harness/ports.js'
import { until } from '../../harness/wait.js'
import { NOT_MEASURED } from '../../harness/main-process.js'

// `npm run demo` as a user runs it (tsx scripts/demo.ts), with the optional routes on and the
// metrics port taken: it says where metrics went, and the optional routes' curl lines work
// (their worker thread loads under tsx; the landed demo answered them 500).
t.setTimeout(240_000)

const DEMO = fileURLToPath(new URL('../../scripts/demo.ts', import.meta.url))

// Port 9464 taken: by this test when it can, else by whoever holds it already.
const holder: Server = createServer()
holder.on('error', () => {})
holder.listen(9464, '127.0.0.1')
t.teardown(() => holder.close())

const [port] = await freePorts(1)
// tsx as a loader rather than its CLI, which relays Ctrl-C a second time under load (a second
// Ctrl-C means "force" to the demo).
// Not measured for coverage (NOT_MEASURED): tsx keeps its source maps in memory, so what the
// demo and its src/main.ts ran could not be mapped back to src/, and each of their functions
// would count a second time, never called. What the demo runs is covered by the rest of the suite.
const demo = spawn(process.execPath, ['--import', 'tsx', DEMO], {
  env: { PATH: process.env.PATH, EDGE_API_PORT: String(port), EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true', EDGE_API_DRAIN_ANNOUNCE: '0', ...NOT_MEASURED },
  stdio: ['pipe', 'pipe', 'pipe']
})
let out = ''
demo.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
demo.stderr.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
t.teardown(() => { demo.kill('SIGKILL') })
const base = `http://127.0.0.1:${port}`

t.test('the metrics port taken: another one, said so; one curl line per optional route', async (t) => {
  await until(() => out.includes('Metrics: curl'), 'the curl lines', { timeoutMs: 180_000, intervalMs: 100 })
  const moved = /port 9464 is taken: metrics on (\d+) instead/.exec(out)
  t.ok(moved, 'says where the metrics went')
  t.match(out, `Metrics: curl -s 'http://127.0.0.1:${moved?.[1] ?? ''}/metrics'`)
  const optional = out.slice(out.indexOf('The optional routes')).split('\n').filter((l) => l.startsWith('  curl'))
  t.equal(optional.length, 4)
  for (const route of ['/v1/verify-proof', '/v1/verify-block', '/v1/debug/verify/', '/v1/debug/pubkey-to-addr/']) {
    t.equal(optional.filter((l) => l.includes(`${base}${route}`)).length, 1, route)
  }
})

t.test('the optional routes answer under tsx: the worker thread loads, the round trip verifies', async (t) => {
  const commitLine = /curl -s '([^']+\/v1\/debug\/verify\/\d+)'/.exec(out)?.[1] as string
  const verified = await fetch(commitLine)
  t.same([verified.status, await verified.text()], [200, 'Block signatures verified'])
  const participantsUrl = /curl -s '([^']+\/participants)' \| curl -s -H 'content-type: application\/json' --data-binary @- '[^']+\/v1\/verify-block'/.exec(out)?.[1] as string
  const participants = await (await fetch(participantsUrl)).text()
  const res = await fetch(`${base}/v1/verify-block`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: participants })
  t.same([res.status, await res.text()], [200, ''], 'the epoch\'s participants, posted as they came')
})

t.test('Ctrl-C drains and the demo exits 0', async (t) => {
  demo.kill('SIGINT')
  const [code] = await once(demo, 'exit') as [number | null]
  t.equal(code, 0)
  t.match(out, 'edge-api exited with code 0')
  if (code !== 0) t.comment(out.slice(-3000))
})
