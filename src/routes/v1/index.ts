import underPressure from '@fastify/under-pressure'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ChainClient } from '../../chain/client.js'
import { participants } from './participants.js'
import { status } from './status.js'

/**
 * The /v1 routes, with load shedding. under-pressure is registered in this scope only, so
 * /healthz and /readyz keep answering while /v1 sheds: a busy replica must not look dead.
 */
export const v1: FastifyPluginAsyncTypebox<{ chain: ChainClient }> = async (app, { chain }) => {
  await app.register(underPressure, {
    // Interval mode measures utilisation since the last sample, not since boot, so a
    // recent burst can trip it (fastify/under-pressure#294).
    eventLoopUtilizationMode: 'interval',
    maxEventLoopUtilization: 0.98,
    maxEventLoopDelay: 1000,
    retryAfter: 1
  })
  await app.register(status)
  await app.register(participants, { chain })
}
