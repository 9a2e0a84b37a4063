import Fastify, { type FastifyInstance } from 'fastify'
import { once } from 'node:events'
import { connect } from 'node:net'
import t, { type Test } from 'tap'
import { anyOriginHeaders } from '../../src/http/cors.js'
import { Pipelining } from '../../src/http/pipelining.js'
import { requestLifecycle, type LifecycleOptions } from '../../src/http/request-lifecycle.js'
import { Metrics } from '../../src/metrics/registry.js'
import { sampleValue } from '../../harness/prometheus.js'
import { until } from '../../harness/wait.js'

// The lifecycle over a real socket: what a client sees of its one onRequest (the id, the Host
// check, the fixed headers, the pipelining turn) and what its one 'close' listener ends.

async function listening (t: Test, options: Omit<LifecycleOptions, 'pipelining'>, pipelining = new Pipelining()): Promise<{ app: FastifyInstance, port: number, closeListeners: number[] }> {
  // Node's own Host check off, as the app has it (app.ts): the lifecycle answers instead.
  const app = Fastify({ http: { requireHostHeader: false } })
  requestLifecycle(app, { pipelining, ...options })
  const closeListeners: number[] = []
  app.get('/item', async (_request, reply) => {
    closeListeners.push(reply.raw.listenerCount('close'))
    return { ok: true }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    app.server.closeAllConnections()
    await app.close()
  })
  return { app, port: (app.server.address() as { port: number }).port, closeListeners }
}

/** Writes `text` on a new connection and reads until the server has sent `answers` status lines (until's 10 s at most). */
async function exchange (port: number, text: string, answers: number): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => { received += chunk })
  socket.write(text)
  await until(() => (received.match(/HTTP\/1\.1 \d{3} /g) ?? []).length >= answers, `${answers} answers on one connection`)
  socket.destroy()
  return received
}

t.test('an HTTP/1.1 request without Host is a 400 in the envelope, with its id, before CORS; in flight no longer once answered', async (t) => {
  const metrics = new Metrics()
  const { port } = await listening(t, { metrics, fixedHeaders: anyOriginHeaders() })
  const answer = await exchange(port, 'GET /item HTTP/1.1\r\n\r\n', 1)
  t.match(answer, /^HTTP\/1\.1 400 /)
  t.match(answer, /missing Host header/)
  t.match(answer, /x-request-id: req-/i)
  t.notMatch(answer, /access-control-allow-origin/i, 'refused before the fixed headers')
  await until(async () => sampleValue(await metrics.scrape(), 'edge_api_requests_in_flight') === 0, 'the refused request out of the gauge')
  const http10 = await exchange(port, 'GET /item HTTP/1.0\r\n\r\n', 1)
  t.match(http10, /^HTTP\/1\.1 200 /, 'HTTP/1.0 needs no Host')
})

t.test('the fixed headers on every answer past the Host check, an unknown path\'s too; one close listener of the lifecycle per response', async (t) => {
  const metrics = new Metrics()
  const { port, closeListeners } = await listening(t, { metrics, fixedHeaders: anyOriginHeaders() })
  const answers = await exchange(port, 'GET /item HTTP/1.1\r\nHost: edge\r\n\r\nGET /nowhere HTTP/1.1\r\nHost: edge\r\n\r\n', 2)
  t.equal((answers.match(/access-control-allow-origin: \*/gi) ?? []).length, 2)
  t.equal((answers.match(/access-control-expose-headers: X-Block-Height/gi) ?? []).length, 2)
  // Fastify's own listeners aside (it takes none on 'close' of its own for a GET), the
  // lifecycle adds one: not one per concern (metrics, pipelining).
  t.same(closeListeners, [1], 'one listener on the response\'s close')
  await until(async () => sampleValue(await metrics.scrape(), 'edge_api_requests_in_flight') === 0, 'both answered requests out of the gauge')
})

t.test('without metrics or an access line: pipelined requests beyond the turn still run once the earlier are answered', async (t) => {
  const { port, closeListeners } = await listening(t, {}, new Pipelining(1))
  const requests = 'GET /item HTTP/1.1\r\nHost: edge\r\n\r\n'.repeat(3)
  const answers = await exchange(port, requests, 3)
  t.equal((answers.match(/HTTP\/1\.1 200 /g) ?? []).length, 3, 'each waiting request ran when the one before it closed')
  t.same(closeListeners, [1, 1, 1])
})
