import Fastify, { LogController } from 'fastify'
import t from 'tap'
import { accessLog, logArrival } from '../../src/http/access-log.js'
import { Pipelining } from '../../src/http/pipelining.js'
import { requestLifecycle } from '../../src/http/request-lifecycle.js'
import { RequestLogger } from '../../src/http/request-logger.js'
import { createLogger } from '../../src/logger.js'
import { buildTestApp } from '../fixtures/app.js'
import { LogLines } from '../../harness/log-lines.js'

t.test('one line per answered request: method, route pattern, status, duration, request id, client', async (t) => {
  const { lines: logs, stream } = new LogLines()
  const app = Fastify({ loggerInstance: createLogger('info', stream), logController: new LogController({ disableRequestLogging: true }) })
  requestLifecycle(app, { pipelining: new Pipelining(), access: accessLog({ log: app.log, skip: (reply) => reply.statusCode === 503 }) })
  app.get('/items/:id', async () => ({ ok: true }))
  app.get('/refused', async (_request, reply) => reply.code(503).send({ message: 'no' }))
  t.teardown(() => app.close())
  await app.inject('/items/42')
  await app.inject({ method: 'GET', url: '/nowhere' })
  await app.inject('/refused')
  await new Promise((resolve) => setImmediate(resolve))
  const lines = logs.filter((l) => l.msg === 'request')
  t.equal(lines.length, 2, 'the skipped response has no line')
  t.match(lines[0], { level: 30, reqId: String, method: 'GET', route: '/items/:id', status: 200, ms: Number, client: '127.0.0.1' })
  // Field by field: the pid or the time may hold the digits 42 by chance.
  t.notOk(Object.values(lines[0] as object).some((value) => typeof value === 'string' && value.includes('/items/42')), 'the pattern, not the URL')
  t.match(lines[1], { method: 'GET', route: null, status: 404 })
  t.equal(logs.length, 2, 'nothing else')
})

t.test('the line is written through the root logger with the request\'s ids: no child logger made for it', async (t) => {
  const { lines: logs, stream } = new LogLines()
  const root = createLogger('info', stream)
  const app = Fastify({
    loggerInstance: root,
    logController: new LogController({ disableRequestLogging: true }),
    // The app's own factory (app.ts): the request's child is made when something logs through it.
    childLoggerFactory: (parent, bindings, options, raw) => new RequestLogger(parent, bindings, options, raw.headers) as unknown as typeof root
  })
  requestLifecycle(app, { pipelining: new Pipelining(), access: accessLog({ log: app.log }) })
  app.get('/items/:id', async () => ({ ok: true }))
  t.teardown(() => app.close())
  await app.ready()
  const child = root.child.bind(root)
  let children = 0
  root.child = ((...args: Parameters<typeof root.child>) => {
    children++
    return child(...args)
  }) as typeof root.child
  await app.inject({ url: '/items/1', headers: { 'x-request-id': 'router-1' } })
  await app.inject('/items/2')
  t.equal(children, 0, 'no pino child per access line')
  t.match(logs, [{ msg: 'request', reqId: 'req-1', clientReqId: 'router-1', route: '/items/:id' }, { msg: 'request', reqId: 'req-2' }])
  t.notOk('clientReqId' in (logs[1] as object), 'none without a well-formed X-Request-Id')
})

t.test('below info nothing is written', async (t) => {
  const { lines: logs, stream } = new LogLines()
  const app = Fastify({ loggerInstance: createLogger('warn', stream), logController: new LogController({ disableRequestLogging: true }) })
  requestLifecycle(app, { pipelining: new Pipelining(), access: accessLog({ log: app.log }) })
  app.get('/', async () => 'ok')
  t.teardown(() => app.close())
  await app.inject('/')
  t.equal(logs.length, 0)
})

t.test('at debug, a line as each request arrives, before its answer', async (t) => {
  const { lines: logs, stream } = new LogLines()
  const app = Fastify({ loggerInstance: createLogger('debug', stream), logController: new LogController({ disableRequestLogging: true }) })
  app.addHook('onRequest', logArrival)
  requestLifecycle(app, { pipelining: new Pipelining(), access: accessLog({ log: app.log }) })
  app.get('/items/:id', async () => ({ ok: true }))
  t.teardown(() => app.close())
  await app.inject('/items/42?x=1')
  t.same(logs.map((l) => l.msg), ['incoming request', 'request'])
  t.match(logs[0], { level: 20, reqId: logs[1]?.reqId, method: 'GET', url: '/items/42?x=1' })
})

t.test('the app writes its access line from info on, and none at warn', async (t) => {
  for (const [level, expected] of [['info', 1], ['warn', 0]] as const) {
    const { app, logs } = await buildTestApp(t, { env: { EDGE_API_LOG_LEVEL: level } })
    const res = await app.inject('/healthz')
    t.equal(res.statusCode, 200)
    await new Promise((resolve) => setImmediate(resolve))
    t.equal(logs.filter((l) => l.msg === 'request').length, expected, `at ${level}`)
  }
})
