import underPressure, { type FastifyUnderPressureOptions } from '@fastify/under-pressure'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ChainClient } from '../../chain/client.js'
import { HttpError } from '../../errors.js'
import { bls } from './bls.js'
import { bridge } from './bridge.js'
import { epochParticipants } from './epoch-participants.js'
import { epochs } from './epochs.js'
import { models } from './models.js'
import { participants } from './participants.js'
import { pocBatches } from './poc-batches.js'
import { restrictions } from './restrictions.js'
import { status } from './status.js'
import { verify, type VerifyTuning } from './verify.js'
import { versions } from './versions.js'

// One instance: shedding must stay cheap when it matters most.
const OVERLOADED = new HttpError(503, 'Service Unavailable', { 'retry-after': '1' })

export type LoadShedding = Pick<FastifyUnderPressureOptions, 'maxEventLoopDelay' | 'maxEventLoopUtilization' | 'maxHeapUsedBytes' | 'sampleInterval'>

/**
 * The /v1 routes, with load shedding. under-pressure is registered in this scope only, so
 * /healthz and /readyz keep answering while /v1 sheds: a busy replica must not look dead.
 */
export interface V1Options {
  readonly chain: ChainClient
  readonly loadShedding?: LoadShedding | undefined
  /** Serve the optional verify/debug routes (EDGE_API_EXPOSE_OPTIONAL_ROUTES); 403 otherwise. */
  readonly exposeOptionalRoutes: boolean
  readonly verifyTuning?: VerifyTuning | undefined
}

export const v1: FastifyPluginAsyncTypebox<V1Options> = async (app, { chain, loadShedding, exposeOptionalRoutes, verifyTuning }) => {
  const thresholds = { maxEventLoopUtilization: 0.98, maxEventLoopDelay: 1000, sampleInterval: 1000, ...loadShedding }
  // The first samples cover the boot's own work (compiling every route's schemas), which is
  // not overload: acting on them would turn away a fresh replica's first clients, just as the
  // router admits it. Readings count from two sample periods after the app is ready.
  let sheddingFrom = Infinity
  app.addHook('onReady', async () => {
    sheddingFrom = performance.now() + 2 * thresholds.sampleInterval
  })
  await app.register(underPressure, {
    // Interval mode measures utilisation since the last sample, not since boot, so a
    // recent burst can trip it (fastify/under-pressure#294).
    eventLoopUtilizationMode: 'interval',
    ...thresholds,
    pressureHandler: () => {
      // Thrown from the onRequest hook, it reaches the error handler like any HttpError.
      if (performance.now() >= sheddingFrom) throw OVERLOADED
    }
  })
  await app.register(status)
  await app.register(versions, { chain })
  for (const plugin of [models, participants, epochs, epochParticipants, pocBatches, restrictions, bls, bridge]) {
    await app.register(plugin, { chain })
  }
  await app.register(verify, { ...verifyTuning, chain, expose: exposeOptionalRoutes })
}
