import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { blocksBehind, type VerifiedSource } from '../../light/freshness.js'

// {"status":"ok"} as the Go service answered, and with EDGE_API_VERIFICATION not off what the
// replica's light client knows (docs/verified-reads.md, "Following the head").

const Verification = Type.Object({
  state: Type.Union([Type.Literal('starting'), Type.Literal('verifying'), Type.Literal('expired')], { description: 'starting: no header verified yet; verifying: following the head; expired: the trusted header is past EDGE_API_TRUSTING_PERIOD' }),
  verifiedHeight: Type.Union([Type.Integer(), Type.Null()], { description: 'V: the newest height whose state is verified (the X-Verified-Height of latest answers)' }),
  headHeight: Type.Union([Type.Integer(), Type.Null()], { description: 'the best head of this replica\'s chain nodes' }),
  blocksBehind: Type.Union([Type.Integer(), Type.Null()], { description: 'headHeight - verifiedHeight: 2 while following with REST nodes' })
})

export const status: FastifyPluginAsyncTypebox<{ chain: VerifiedSource }> = async (app, { chain }) => {
  app.get('/status', {
    schema: {
      summary: 'The service is serving (and, with verification on, how far its verified height is behind the head)',
      response: { 200: Type.Object({ status: Type.Literal('ok'), verification: Type.Optional(Verification) }) }
    }
  }, async () => {
    const cursor = chain.verified
    if (cursor === undefined) return { status: 'ok' as const }
    const best = chain.heads.best
    return {
      status: 'ok' as const,
      verification: { state: cursor.state, verifiedHeight: cursor.height ?? null, headHeight: best === 0 ? null : best, blocksBehind: blocksBehind(chain) ?? null }
    }
  })
}
