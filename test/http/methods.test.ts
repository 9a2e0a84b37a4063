import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { handleUnrouted, routedMethods } from '../../src/http/methods.js'

// Echo v4's router, which the Go service used: a known path with a method it does not have
// is 405 with Allow; OPTIONS is 204 with Allow; an unknown path is 404.
async function app (t: Test) {
  const app = Fastify()
  app.get('/v1/status', async () => ({ status: 'ok' }))
  app.get('/v1/bls/epoch/:id', async () => ({}))
  app.post('/v1/verify-proof', async () => ({}))
  app.setNotFoundHandler(handleUnrouted)
  t.teardown(() => app.close())
  await app.ready()
  return app
}

t.test('a wrong method on a known path is 405 Method Not Allowed with Allow, in the envelope', async (t) => {
  const server = await app(t)
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
    const res = await server.inject({ method, url: '/v1/status' })
    t.equal(res.statusCode, 405, method)
    t.equal(res.headers.allow, 'OPTIONS, GET, HEAD', 'Echo\'s order, with the HEAD Fastify serves for GET')
    t.same(res.json(), { message: 'Method Not Allowed' })
  }
  const withParam = await server.inject({ method: 'POST', url: '/v1/bls/epoch/7?pretty' })
  t.equal(withParam.statusCode, 405)
  t.equal(withParam.headers.allow, 'OPTIONS, GET, HEAD')
  const postOnly = await server.inject({ method: 'GET', url: '/v1/verify-proof' })
  t.equal(postOnly.statusCode, 405)
  t.equal(postOnly.headers.allow, 'OPTIONS, POST')
})

t.test('OPTIONS on a known path is 204 with Allow', async (t) => {
  const server = await app(t)
  const res = await server.inject({ method: 'OPTIONS', url: '/v1/bls/epoch/7' })
  t.equal(res.statusCode, 204)
  t.equal(res.headers.allow, 'OPTIONS, GET, HEAD')
  t.equal(res.body, '')
})

t.test('an unknown path is 404 for every method', async (t) => {
  const server = await app(t)
  for (const method of ['GET', 'POST', 'OPTIONS'] as const) {
    const res = await server.inject({ method, url: '/v1/nope' })
    t.equal(res.statusCode, 404, method)
    t.notOk(res.headers.allow)
    t.same(res.json(), { message: 'Not Found' })
  }
})

t.test('routedMethods asks the router, ignoring the query', async (t) => {
  const server = await app(t)
  t.same(routedMethods({ server } as never, '/v1/status?x=1'), ['GET', 'HEAD'])
  t.same(routedMethods({ server } as never, '/v1/verify-proof'), ['POST'])
  t.same(routedMethods({ server } as never, '/nope'), [])
})
