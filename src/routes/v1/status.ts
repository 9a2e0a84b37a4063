import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'

export const status: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/status', {
    schema: {
      summary: 'The service is serving',
      response: { 200: Type.Object({ status: Type.Literal('ok') }) }
    }
  }, async () => ({ status: 'ok' as const }))
}
