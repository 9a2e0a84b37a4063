import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { lazySchemaCompilers } from '../../src/http/lazy-schemas.js'

// A listening app with the compilers app.ts uses: what goes over the wire is what Fastify's
// own compilers make of the schemas, and nothing is compiled before a request needs it.
async function listening (t: Test, routes: (app: FastifyInstance) => void): Promise<string> {
  const app = Fastify({ schemaController: lazySchemaCompilers(), ajv: { customOptions: { keywords: ['x-note'] } } })
  routes(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const address = app.server.address() as { port: number }
  return `http://127.0.0.1:${address.port}`
}

const query = {
  type: 'object',
  properties: { n: { type: 'integer', minimum: 1, 'x-note': 'a custom keyword, as app.ts declares them' } },
  required: ['n']
} as const

t.test('validation: a bad value gets 400 with the validator\'s errors, a good one is coerced', async (t) => {
  const url = await listening(t, (app) => {
    app.get('/q', { schema: { querystring: query } }, async (request) => ({ n: (request.query as { n: number }).n, type: typeof (request.query as { n: number }).n }))
  })
  for (const bad of ['?n=0', '?n=x', '']) {
    const res = await fetch(`${url}/q${bad}`)
    t.equal(res.status, 400, `/q${bad}`)
    t.match(await res.json(), { message: /querystring/ })
  }
  const res = await fetch(`${url}/q?n=7`)
  t.same(await res.json(), { n: 7, type: 'number' }, 'and a valid one passes, as a number')
  t.equal((await fetch(`${url}/q?n=-1`)).status, 400, 'the compiled validator is reused: errors are those of its last call')
})

t.test('serialization: the answer is what the response schema allows, every time', async (t) => {
  const url = await listening(t, (app) => {
    app.get('/r', {
      schema: { response: { 200: { type: 'object', properties: { kept: { type: 'string' }, n: { type: 'integer' } } } } }
    }, async () => ({ kept: 'yes', n: '12', dropped: 'secret' }))
  })
  for (let i = 0; i < 2; i++) t.equal(await (await fetch(`${url}/r`)).text(), '{"kept":"yes","n":12}')
})

t.test('nothing is compiled at start: a broken schema fails its own route\'s first request, not the boot', async (t) => {
  const url = await listening(t, (app) => {
    app.get('/broken', { schema: { querystring: { type: 'object', properties: { a: { type: 'no-such-type' } } } } }, async () => 'never')
    app.get('/broken-answer', { schema: { response: { 200: { type: 'object', properties: { a: { $ref: '#/missing' } } } } } }, async () => ({ a: 1 }))
    app.get('/fine', async () => 'ok')
  })
  t.equal((await fetch(`${url}/fine`)).status, 200, 'the app listens and serves')
  t.equal((await fetch(`${url}/broken`)).status, 500)
  t.equal((await fetch(`${url}/broken-answer`)).status, 500)
})
