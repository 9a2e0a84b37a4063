import Fastify from 'fastify'
import t from 'tap'
import { refuseStream, wantsStream } from '../../src/admission/stream-refusal.js'

t.test('a refused stream request is a 200 event stream that says why, asks for the wait as retry:, and ends', async (t) => {
  const app = Fastify()
  app.route({ method: ['GET', 'POST'], url: '/s', handler: async (request, reply) => wantsStream(request) ? refuseStream(reply, 7, 'over\r\nthe limit') : await reply.code(429).send({ message: 'over' }) })
  t.teardown(async () => await app.close())
  const stream = await app.inject({ url: '/s', headers: { accept: 'text/event-stream' } })
  t.equal(stream.statusCode, 200)
  t.match(stream.headers, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'retry-after': '7' })
  t.equal(stream.body, ': over the limit\nretry: 7000\n\n', 'one comment line, whatever the reason holds')
  t.equal((await app.inject({ url: '/s' })).statusCode, 429, 'no Accept: text/event-stream: not a stream')
  t.equal((await app.inject({ url: '/s', headers: { accept: 'application/json' } })).statusCode, 429)
  t.equal((await app.inject({ method: 'POST', url: '/s', headers: { accept: 'text/event-stream' } })).statusCode, 429, 'only a GET is a stream')
})
