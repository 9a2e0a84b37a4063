import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Readiness } from '../readiness.js'

const Ready = Type.Object({ status: Type.Literal('ready') })

// Property order is the wire order: {"status","reason","error"} (docs/readiness-and-drain.md).
const NotReady = Type.Object({
  status: Type.Literal('not ready'),
  reason: Type.Union([Type.Literal('draining'), Type.Literal('chain unreachable'), Type.Literal('not verified')]),
  error: Type.Optional(Type.String({ description: 'why the chain probe failed (chain unreachable), or why the verified height does not do (not verified: EDGE_API_VERIFICATION=strict)' }))
})

/** Liveness and readiness. Registered outside /v1, so load shedding never touches them. */
export const health: FastifyPluginAsyncTypebox<{ readiness: Readiness }> = async (app, { readiness }) => {
  // Liveness: the process is up. Never touches the chain; stays 200 while draining, so an
  // orchestrator does not restart a replica that is only cut off from the chain.
  app.get('/healthz', {
    schema: { response: { 200: Type.String() } }
  }, async (_request, reply) => reply.type('text/plain; charset=utf-8').send('ok'))

  // Readiness: whether the router should send traffic here. 503 takes the replica out of
  // the pool without restarting it (chain cut off) or ahead of its shutdown (draining).
  app.get('/readyz', {
    schema: {
      summary: 'Readiness for the balancer: the chain answers and the replica is not draining',
      response: { 200: Ready, 503: NotReady }
    }
  }, async (_request, reply) => {
    // A cached answer must never be reused by anyone between us and the balancer.
    reply.header('cache-control', 'no-store')
    const answer = await readiness.check()
    return reply.code(answer.status === 'ready' ? 200 : 503).send(answer)
  })
}
