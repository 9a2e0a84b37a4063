import Fastify from 'fastify'
import t, { type Test } from 'tap'
import { handleError, handleFrameworkError, handleNotFound } from '../../src/http/error-handler.js'
import { ChainUnavailableError, HttpError } from '../../src/errors.js'
import { createLogger } from '../../src/logger.js'
import { LogLines } from '../../harness/log-lines.js'

async function appThrowing (t: Test, error: unknown) {
  const { lines: logs, stream } = new LogLines()
  const app = Fastify({ loggerInstance: createLogger('debug', stream) })
  app.setErrorHandler(handleError)
  app.setNotFoundHandler(handleNotFound)
  app.get('/boom', async () => { throw error })
  app.post('/echo', async (request) => request.body)
  t.teardown(() => app.close())
  return { app, logs }
}

t.test('an HttpError answers its status, headers and message; 4xx logged at debug, 5xx at warn', async (t) => {
  const { app, logs } = await appThrowing(t, new HttpError(429, 'slow down', { 'retry-after': '3' }))
  const res = await app.inject('/boom')
  t.equal(res.statusCode, 429)
  t.equal(res.headers['retry-after'], '3')
  t.same(res.json(), { message: 'slow down' })
  t.match(logs.find((l) => l.msg === 'request failed'), { level: 20, statusCode: 429, reason: 'slow down' })
  t.notOk(logs.find((l) => l.msg === 'request failed')?.err, 'no stack for a client error')

  const chain = await appThrowing(t, new ChainUnavailableError(new Error('connect ECONNREFUSED 10.0.0.7:1317')))
  const down = await chain.app.inject('/boom')
  t.equal(down.statusCode, 503)
  t.same(down.json(), { message: 'chain unavailable' }, 'the address stays in the log')
  t.match(chain.logs.find((l) => l.msg === 'request failed'), { level: 40, cause: 'Error: connect ECONNREFUSED 10.0.0.7:1317' })

  const coded = await appThrowing(t, new ChainUnavailableError(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })))
  await coded.app.inject('/boom')
  t.match(coded.logs.find((l) => l.msg === 'request failed'), { cause: 'Error: other side closed (UND_ERR_SOCKET)' })

  const bare = await appThrowing(t, new HttpError(500, 'chain kept paginating'))
  await bare.app.inject('/boom')
  t.notOk('cause' in (bare.logs.find((l) => l.msg === 'request failed') ?? {}), 'no cause, no cause field')

  const plain = await appThrowing(t, new ChainUnavailableError('chain answered 502 without a gateway error body'))
  await plain.app.inject('/boom')
  t.match(plain.logs.find((l) => l.msg === 'request failed'), { cause: 'chain answered 502 without a gateway error body' })
})

t.test("Fastify's own client errors keep their status and message", async (t) => {
  const { app } = await appThrowing(t, null)
  const res = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{bad' })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { message: /JSON/ })
  t.same(Object.keys(res.json()), ['message'])
})

t.test('anything unexpected is a bare 500; the detail goes to the log only', async (t) => {
  const { app, logs } = await appThrowing(t, new TypeError('cannot read x of undefined at /srv/app/secret.js'))
  const res = await app.inject('/boom')
  t.equal(res.statusCode, 500)
  t.equal(res.body, '{"message":"Internal Server Error"}')
  t.match(logs.find((l) => l.msg === 'request failed unexpectedly'), { level: 50, err: { message: /secret\.js/ } })
})

t.test('an unknown route is 404 Not Found in the envelope', async (t) => {
  const { app } = await appThrowing(t, null)
  const res = await app.inject('/nope')
  t.equal(res.statusCode, 404)
  t.same(res.json(), { message: 'Not Found' })
})

t.test('any other router error is a plain 400 in the envelope', async (t) => {
  const app = Fastify()
  app.get('/', async (request, reply) => handleFrameworkError(Object.assign(new Error('async constraint failed'), { code: 'FST_ERR_ASYNC_CONSTRAINT' }), request, reply))
  const res = await app.inject('/')
  t.equal(res.statusCode, 400)
  t.same(res.json(), { message: 'Bad Request' })
})
