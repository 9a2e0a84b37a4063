import { Writable } from 'node:stream'
import t from 'tap'
import { createLogger } from '../../src/logger.js'
import { RequestLogger } from '../../src/http/request-logger.js'

/** A logger at `level` whose lines are kept, parsed. */
function capture (level: 'warn' | 'trace') {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>)
      done()
    }
  })
  const logger = createLogger(level, stream)
  let children = 0
  // Counted on the parent only: pino's children inherit it, and make their own children with it.
  const child = logger.child
  logger.child = function (this: typeof logger, ...args: Parameters<typeof logger.child>) {
    if (this === logger) children++
    return child.apply(this, args)
  } as typeof logger.child
  return { logger, lines, children: () => children }
}

t.test('no pino child is made for a request that logs nothing; the first line makes one, with the request ids', async (t) => {
  const { logger, lines, children } = capture('warn')
  const quiet = new RequestLogger(logger, { reqId: 'r1' }, {}, { 'x-request-id': 'router-1' })
  quiet.info('below the level')
  t.equal(children(), 1, 'a call makes the child even below the level, once')
  const silent = new RequestLogger(logger, { reqId: 'r2' }, {}, {})
  silent.silent()
  t.equal(children(), 1, 'silent and a request that never logs make none')
  t.same(lines, [], 'nothing below warn is written')

  silent.warn({ status: 503 }, 'slow %s', 'chain')
  quiet.error('failed')
  quiet.fatal(new Error('boom'), 'gone')
  t.equal(children(), 2, 'one child per request that logs')
  t.match(lines, [
    { level: 40, reqId: 'r2', status: 503, msg: 'slow chain' },
    { level: 50, reqId: 'r1', clientReqId: 'router-1', msg: 'failed' },
    { level: 60, reqId: 'r1', clientReqId: 'router-1', msg: 'gone', err: { message: 'boom' } }
  ])
  t.notOk('clientReqId' in (lines[0] as object), 'no clientReqId without a request id header')
})

t.test('a malformed X-Request-Id is left out; info, debug and trace write at their levels', async (t) => {
  const { logger, lines } = capture('trace')
  const log = new RequestLogger(logger, { reqId: 'r9' }, {}, { 'x-request-id': 'not an id' })
  log.info('i')
  log.debug({ a: 1 }, 'd')
  log.trace('t')
  t.match(lines, [{ level: 30, reqId: 'r9', msg: 'i' }, { level: 20, a: 1, msg: 'd' }, { level: 10, msg: 't' }])
  t.ok(lines.every((line) => !('clientReqId' in line)))
})

t.test('level reads and sets the child\'s; options are the child\'s; child binds on top of the request\'s', async (t) => {
  const { logger, lines } = capture('warn')
  const log = new RequestLogger(logger, { reqId: 'r3' }, { level: 'info' }, {})
  t.equal(log.level, 'info', 'a route\'s own level (Fastify passes it as an option)')
  log.info('route level')
  log.level = 'error'
  t.equal(log.level, 'error')
  log.warn('now below')
  log.child({ step: 'read' }).error('nested')
  t.match(lines, [{ reqId: 'r3', msg: 'route level' }, { reqId: 'r3', step: 'read', msg: 'nested' }])
  t.equal(lines.length, 2)
  t.equal(logger.level, 'warn', 'the parent keeps its level')
})
