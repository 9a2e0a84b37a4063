// The baseline of benchmark 1: a bare Fastify answering /v1/status with the same JSON,
// serialized through the same kind of response schema, no plugins, no logger.
import Fastify from 'fastify'
import { serveCommands } from '../lib/ipc.js'

const app = Fastify({ logger: false })
app.get('/v1/status', {
  schema: {
    response: { 200: { type: 'object', properties: { status: { type: 'string', const: 'ok' } }, required: ['status'] } }
  }
}, async () => ({ status: 'ok' }))
await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address()
serveCommands({ port: typeof address === 'object' && address !== null ? address.port : 0, pid: process.pid }, {})
