import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify'
import { once } from 'node:events'
import { connect } from 'node:net'
import t, { type Test } from 'tap'
import { admissionControl } from '../../src/admission/admission.js'
import { FairAdmission } from '../../src/admission/fair-admission.js'
import { Shedding } from '../../src/admission/shedding.js'
import { anyOriginHeaders } from '../../src/http/cors.js'
import { Pipelining } from '../../src/http/pipelining.js'
import { requestLifecycle, type LifecycleOptions } from '../../src/http/request-lifecycle.js'
import { Metrics } from '../../src/metrics/registry.js'
import { sampleValue } from '../../harness/prometheus.js'
import { until } from '../../harness/wait.js'

// The lifecycle over a real socket: what a client sees of its one onRequest (the id, the Host
// check, the fixed headers, the pipelining turn) and what its one 'close' listener ends.

interface Listening {
  readonly app: FastifyInstance
  readonly port: number
  /** The listeners on each answered response's 'close', read by its route. */
  readonly closeListeners: number[]
  /** Fair share of /v1/item, admitted as the app's /v1 is (admission.ts). */
  readonly fair: FairAdmission
}

async function listening (t: Test, options: Omit<LifecycleOptions, 'pipelining'>, pipelining = new Pipelining()): Promise<Listening> {
  // Node's own Host check off, as the app has it (app.ts): the lifecycle answers instead.
  const app = Fastify({ http: { requireHostHeader: false } })
  requestLifecycle(app, { pipelining, ...options })
  const closeListeners: number[] = []
  const route = async (_request: unknown, reply: FastifyReply): Promise<{ ok: boolean }> => {
    closeListeners.push(reply.raw.listenerCount('close'))
    return { ok: true }
  }
  app.get('/item', route)
  // A /v1 route behind fair share, as the app's: a request it admits is counted until its close.
  const shedding = new Shedding(app.log)
  const fair = new FairAdmission({ log: app.log, shedding })
  await app.register(async (v1) => {
    await admissionControl(v1, shedding, { maxEventLoopDelay: 0 }, fair)
    v1.get('/item', route)
  }, { prefix: '/v1' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    app.server.closeAllConnections()
    await app.close()
  })
  return { app, port: (app.server.address() as { port: number }).port, closeListeners, fair }
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
  const { port, closeListeners, fair } = await listening(t, { metrics, fixedHeaders: anyOriginHeaders() })
  const answers = await exchange(port, 'GET /item HTTP/1.1\r\nHost: edge\r\n\r\nGET /nowhere HTTP/1.1\r\nHost: edge\r\n\r\nGET /v1/item HTTP/1.1\r\nHost: edge\r\n\r\n', 3)
  t.equal((answers.match(/access-control-allow-origin: \*/gi) ?? []).length, 3)
  t.equal((answers.match(/access-control-expose-headers: X-Block-Height/gi) ?? []).length, 3)
  t.equal((answers.match(/HTTP\/1\.1 200 /g) ?? []).length, 2, 'both routes served, /v1/item past fair admission')
  // Fastify's own listeners aside (it takes none on 'close' of its own for a GET), the
  // lifecycle adds one: not one per concern (metrics, pipelining, fair share's count), a
  // /v1 request that fair admission counted too.
  t.same(closeListeners, [1, 1], 'one listener on the response\'s close')
  await until(async () => sampleValue(await metrics.scrape(), 'edge_api_requests_in_flight') === 0, 'every answered request out of the gauge')
  await until(() => fair.share.inFlight === 0, 'the /v1 request out of fair share\'s count, by the lifecycle\'s listener')
})

t.test('without metrics or an access line: pipelined requests beyond the turn still run once the earlier are answered', async (t) => {
  const { port, closeListeners } = await listening(t, {}, new Pipelining(1))
  const requests = 'GET /item HTTP/1.1\r\nHost: edge\r\n\r\n'.repeat(3)
  const answers = await exchange(port, requests, 3)
  t.equal((answers.match(/HTTP\/1\.1 200 /g) ?? []).length, 3, 'each waiting request ran when the one before it closed')
  t.same(closeListeners, [1, 1, 1])
})
