import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { ChainClient } from '../chain/client.js'

/** Liveness and readiness. Registered outside /v1, so load shedding never touches them. */
export const health: FastifyPluginAsyncTypebox<{ chain: ChainClient }> = async (app) => {
  // Liveness: the process is up. Never touches the chain; stays 200 while draining, so an
  // orchestrator does not restart a replica that is only cut off from the chain.
  app.get('/healthz', {
    schema: { response: { 200: Type.String() } }
  }, async (_request, reply) => reply.type('text/plain; charset=utf-8').send('ok'))
}
