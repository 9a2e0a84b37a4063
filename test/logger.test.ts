import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, constants, openSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import t from 'tap'
import { closeDestination, createLogger } from '../src/logger.js'
import { LogLines } from '../harness/log-lines.js'

t.test('writes pino JSON lines with the level, service and an ISO time; redacts credentials', async (t) => {
  const { lines, stream } = new LogLines()
  const log = createLogger('info', stream)
  log.debug('not written at info')
  log.info({ req: { headers: { authorization: 'Bearer secret', cookie: 'a=b', host: 'x' } } }, 'hello')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(lines.length, 1)
  t.match(lines[0], { level: 30, service: 'edge-api', msg: 'hello', req: { headers: { authorization: '[Redacted]', cookie: '[Redacted]', host: 'x' } } })
  t.match(lines[0]?.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
})

t.test('closeDestination: every line handed to an asynchronous destination is written, in order, before it resolves', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'edge-api-log-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'out.log')
  const destination = pino.destination({ dest: file, sync: false })
  await once(destination, 'ready')
  const log = createLogger('info', destination)
  // Enough lines that writes are still in progress when the last one is logged.
  for (let i = 0; i < 5000; i++) log.info({ i }, 'line')
  log.info('exit')
  await closeDestination(destination, 5000)
  const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { msg: string, i?: number })
  t.equal(lines.length, 5001)
  t.ok(lines.slice(0, 5000).every((l, i) => l.i === i), 'in order')
  t.equal(lines.at(-1)?.msg, 'exit', 'the last line last')
})

t.test('closeDestination gives up after its timeout when nobody reads', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'edge-api-log-'))
  const fifo = join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  // A reader that never reads: the pipe fills up and the write in progress never ends.
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
  t.teardown(async () => {
    closeSync(reader)
    await rm(dir, { recursive: true, force: true })
  })
  const destination = pino.destination({ dest: fifo, sync: false })
  await once(destination, 'ready')
  const log = createLogger('info', destination)
  for (let i = 0; i < 2000; i++) log.info({ padding: 'x'.repeat(100) }, 'line')
  const started = performance.now()
  await closeDestination(destination, 200)
  const waited = performance.now() - started
  t.ok(waited >= 190 && waited < 2000, `waited ${Math.round(waited)} ms`)
})
