import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { BuildInfo } from '../../build-info.js'
import type { AnswerCache } from '../../cache/answer-cache.js'
import { answerCaching } from '../../cache/http-cache.js'
import type { ChainClient } from '../../chain/client.js'
import { admissionControl, type LoadShedding } from '../../admission/admission.js'
import type { HeadFollower } from '../../waiting/head-follower.js'
import { longPoll, type LongPollOptions } from '../../waiting/long-poll.js'
import type { WaitQuota } from '../../waiting/wait-quota.js'
import type { Shedding } from '../../admission/shedding.js'
import { bls } from './bls.js'
import { bridge } from './bridge.js'
import { epochParticipants } from './epoch-participants.js'
import { epochs } from './epochs.js'
import { light } from './light.js'
import { models } from './models.js'
import { participants } from './participants.js'
import { pocBatches } from './poc-batches.js'
import { restrictions } from './restrictions.js'
import { status } from './status.js'
import { verify, type VerifyTuning } from './verify.js'
import { versions } from './versions.js'

export type { LoadShedding }

/**
 * The /v1 routes, admitted by load too (src/admission/admission.ts, fair-admission.ts: admission's
 * hook sheds this scope's routes only), so /healthz and /readyz keep answering while /v1 sheds: a
 * busy replica must not look dead, and replicas under the same load must not all leave the pool at once.
 */
export interface V1Options {
  readonly chain: ChainClient
  /** Which build this is, for /v1/versions. */
  readonly build: BuildInfo
  /** Counts and answers the requests admission control turns away (app.ts owns it). */
  readonly shedding: Shedding
  readonly loadShedding?: LoadShedding | undefined
  /** Serve the optional verify/debug routes (EDGE_API_EXPOSE_OPTIONAL_ROUTES); 403 otherwise. */
  readonly exposeOptionalRoutes: boolean
  readonly verifyTuning?: VerifyTuning | undefined
  /** Built answers by route, parameters and height (EDGE_API_CACHE_SIZE); undefined when off. */
  readonly cache?: AnswerCache | undefined
  /** The head poll long-polls share with the event streams (app.ts). */
  readonly follower: HeadFollower
  /** The caps of held long-polls, shared with the event streams (src/waiting/wait-quota.ts). */
  readonly quota: WaitQuota
  /** Told how many long-polls are held (the metrics' gauge). */
  readonly onHeld?: ((held: number) => void) | undefined
  /** A held long-poll released (the metrics' histogram of how long). */
  readonly onReleased?: LongPollOptions['onReleased']
}

export const v1: FastifyPluginAsyncTypebox<V1Options> = async (app, { chain, build, shedding, loadShedding, exposeOptionalRoutes, verifyTuning, cache, follower, quota, onHeld, onReleased }) => {
  await admissionControl(app, shedding, loadShedding, app.fairAdmission, app.admission)
  // Before answerCaching: a long-poll waits after the route's own input checks and before the pin.
  longPoll(app, { heads: chain.heads, follower, clock: chain.clock, quota, onHeld, onReleased, verified: chain.verified })
  // Before any route: it classes each route as it is added (src/cache/route-classes.ts), and
  // latest-state handlers read the chain through request.chain, pinned to one height.
  await answerCaching(app, { chain, cache })
  await app.register(status, { chain })
  await app.register(versions, { build })
  for (const plugin of [models, participants, epochs, epochParticipants, pocBatches, restrictions, bls, bridge]) {
    await app.register(plugin)
  }
  await app.register(light, { heads: chain.heads })
  await app.register(verify, { ...verifyTuning, chain, expose: exposeOptionalRoutes })
}
