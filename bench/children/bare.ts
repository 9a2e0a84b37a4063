// The baseline: a bare Fastify answering /v1/status with the same JSON, serialized through the
// same kind of response schema, no plugins. Benchmark 1 runs it with Fastify's default logger
// at warn and at info (two lines per request, to stdout); the overload benchmark at info, with
// a chain read passed straight through from the chain simulator.
// argv: [log level, or "off"] [chain url]
import Fastify from 'fastify'
import { Pool } from 'undici'
import { PARTICIPANT_PATH } from '../suites/context.js'
import { serveCommands } from '../lib/ipc.js'

const [level = 'off', chainUrl] = process.argv.slice(2)
const app = Fastify({ logger: level === 'off' ? false : { level } })
app.get('/v1/status', {
  schema: {
    response: { 200: { type: 'object', properties: { status: { type: 'string', const: 'ok' } }, required: ['status'] } }
  }
}, async () => ({ status: 'ok' }))
if (chainUrl !== undefined) {
  // As many chain connections as edge-api's default EDGE_API_CHAIN_CONCURRENCY.
  const chain = new Pool(chainUrl, { connections: 64, pipelining: 1 })
  app.get<{ Params: { address: string } }>('/v1/participants/:address', async (request, reply) => {
    const { statusCode, body } = await chain.request({ path: PARTICIPANT_PATH + encodeURIComponent(request.params.address), method: 'GET' })
    return reply.code(statusCode).send(await body.json())
  })
}
await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address()
serveCommands({ port: typeof address === 'object' && address !== null ? address.port : 0, pid: process.pid }, {})
