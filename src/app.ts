import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyTypeProvider, type RawServerDefault } from 'fastify'
import type { IncomingMessage, ServerResponse } from 'node:http'
import cors from '@fastify/cors'
import swagger from '@fastify/swagger'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Logger } from 'pino'
import type { BuildInfo } from './build-info.js'
import type { AnswerCache } from './cache/answer-cache.js'
import { documentMinHeight } from './cache/min-height.js'
import type { ChainClient } from './chain/client.js'
import type { Config } from './config.js'
import { ChainBusyError, OverShareError } from './errors.js'
import { accessLog, logArrival } from './http/access-log.js'
import { Admission } from './admission/admit.js'
import type { LoadShedding } from './admission/admission.js'
import { ClientErrors } from './http/client-errors.js'
import { anyOriginHeaders, corsOptions } from './http/cors.js'
import { handleError, handleFrameworkError, MAX_PARAM_LENGTH } from './http/error-handler.js'
import { lazySchemaCompilers } from './http/lazy-schemas.js'
import { FairAdmission } from './admission/fair-admission.js'
import { handleUnrouted } from './http/methods.js'
import { Pipelining } from './http/pipelining.js'
import { RateLimiter } from './admission/rate-limit.js'
import { RequestIds } from './http/request-id.js'
import { requestLifecycle } from './http/request-lifecycle.js'
import { RequestLogger } from './http/request-logger.js'
import { RouteGroupBusyError } from './http/route-group-limit.js'
import { SERVER_TIMEOUTS, serverTimeoutOptions, type ServerTimeouts } from './http/server-timeouts.js'
import { Shedding } from './admission/shedding.js'
import type { Readiness } from './readiness.js'
import { formatSchemaError } from './http/schema-errors.js'
import type { RequestMetrics } from './metrics/requests.js'
import type { RateCounter } from './shared/rate-counter.js'
import { health } from './routes/health.js'
import type { Tracing } from './tracing/tracing.js'
import { v1 } from './routes/v1/index.js'
import { events } from './routes/v1/events.js'
import { HeadFollower } from './waiting/head-follower.js'
import { WaitQuota } from './waiting/wait-quota.js'
import { verifiedHeight } from './http/verified-height.js'
import { provenAnswers, routeVerification } from './proven/proven-answers.js'
import type { VerifyTuning } from './routes/v1/verify.js'

export interface AppOptions {
  readonly config: Config
  readonly chain: ChainClient
  /** Readiness and its drain latch, which the drain sets (service.ts wires both). */
  readonly readiness: Readiness
  /** Where the app's log lines go (service.ts passes the one the process logs with). */
  readonly logger: Logger
  /** Which build this is (src/build-info.ts), for /v1/versions. */
  readonly build: BuildInfo
  /** Overrides of the /v1 load-shedding thresholds (tests trip them on purpose). */
  readonly loadShedding?: LoadShedding
  /** Overrides of the server timeouts (tests shorten them); SERVER_TIMEOUTS by default. */
  readonly serverTimeouts?: Partial<ServerTimeouts>
  /** Overrides of the optional verify routes' limits (tests reach them on purpose). */
  readonly verifyTuning?: VerifyTuning
  /** Where request metrics go; none when metrics are off (EDGE_API_METRICS_PORT=off). */
  readonly metrics?: RequestMetrics | undefined
  /** Server spans; none (no hook at all) when tracing is off. */
  readonly tracing?: Tracing | undefined
  /** Built /v1 answers (EDGE_API_CACHE_SIZE); none when off. */
  readonly cache?: AnswerCache | undefined
  /** EDGE_API_RATE_LIMIT's pool counter (the shared tier); undefined: each replica counts alone. */
  readonly rateCounter?: RateCounter | undefined
}

/** Builds the edge-api Fastify app. Never listens and never touches process (see service.ts). */
// The return type is inferred: it carries the TypeBox type provider.
export async function buildApp (options: AppOptions) {
  const { logger, metrics } = options
  const requestIds = new RequestIds()
  const pipelining = new Pipelining()
  const timeouts = { ...SERVER_TIMEOUTS, ...options.serverTimeouts }
  const clientErrors = new ClientErrors({ log: logger, requestIds, pipelining, timeouts, metrics })
  const app = createFastify(options, requestIds, clientErrors, timeouts)
  clientErrors.watch(app.server)
  const shedding = registerRefusals(app, options)
  registerRequestHooks(app, options, shedding, pipelining)
  await registerEdges(app, options)
  // From the drain latch on, every response closes its connection, so keep-alive clients and
  // the router's reused connections move to another replica before the listener closes, and
  // no socket is left idling until keepAliveTimeout once it does (fastify/fastify#7044).
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (options.readiness.draining) reply.header('connection', 'close')
    done(null, payload)
  })
  registerVerification(app, options)
  await registerRoutes(app, options, shedding)
  return app
}

/**
 * Verified reads (docs/verified-reads.md), no hook with verification off: latest answers say
 * the verified height V and what they are; in answers and strict modes the proven routes
 * answer proven (src/proven/proven-answers.ts) and strict refuses the others.
 */
function registerVerification (app: App, { config, chain, logger }: AppOptions): void {
  const { mode } = config.verification
  if (chain.verified === undefined) return
  app.addHook('onRoute', verifiedHeight(chain.verified, (url) => routeVerification(mode, url)))
  if (mode === 'answers' || mode === 'strict') app.addHook('onRoute', provenAnswers({ mode, chain, hashes: chain.verified, log: logger }))
}

/** The Fastify instance and its server options, no hook or route yet. */
function createFastify (options: AppOptions, requestIds: RequestIds, clientErrors: ClientErrors, timeouts: ServerTimeouts) {
  const { config, logger } = options
  const timeoutOptions = serverTimeoutOptions(timeouts)
  return Fastify({
    loggerInstance: logger,
    // request.ip: the socket's peer, or behind EDGE_API_TRUSTED_PROXIES the first untrusted X-Forwarded-For hop.
    trustProxy: config.edge.trustedProxies.length === 0 ? false : [...config.edge.trustedProxies],
    ...timeoutOptions,
    // Node's Host check answers an empty 400 nobody logs; the request's lifecycle answers it instead (hasRequiredHost).
    http: { ...timeoutOptions.http, requireHostHeader: false },
    // Node's own refusals (400, 408, 431) in the envelope, logged and counted.
    clientErrorHandler: clientErrors.answer,
    // Requests that reach an open keep-alive socket after close() get 503 + Connection: close
    // without running a handler, so a balancer may safely retry them elsewhere.
    return503OnClosing: true,
    // 'idle' reaps idle sockets when the listener closes; never `true`, which would destroy
    // requests still in flight. Forced close is the lifecycle's job, at its deadline.
    forceCloseConnections: 'idle',
    // Fastify's two lines per request ("incoming request", "request completed") give way to
    // one access line (src/http/access-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    // Always our own id; a well-formed X-Request-Id (the router's, or the caller's) goes on
    // every line of the request beside it, as clientReqId.
    genReqId: () => requestIds.next(),
    // The request's pino child is made when something first logs through it (RequestLogger),
    // so a request that writes no line does not pay for one. It offers what Fastify's logger
    // interface has, not the whole of pino's Logger that the app's type says.
    childLoggerFactory: (parent, bindings, loggerOptions, raw) => new RequestLogger(parent, bindings, loggerOptions, raw.headers) as unknown as Logger,
    // Long path values must reach validation and get a 400 that says what is wrong,
    // not the router's 404 (Fastify's default limit is 100 characters).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: handleFrameworkError,
    // Each route's validators and serializers are compiled by its first request, not at start.
    schemaController: lazySchemaCompilers(),
    ajv: { customOptions: { verbose: true, keywords: ['x-error', 'x-proto-enum', 'x-go-int', 'x-api-enum', 'x-api-bytes'] } },
    schemaErrorFormatter: formatSchemaError
  }).withTypeProvider<TypeBoxTypeProvider>()
}

type App = ReturnType<typeof createFastify>

/** Shedding and fair share (decorated on the app), the trace hook, and the error handler that refuses a full queue. */
function registerRefusals (app: App, { readiness, metrics, tracing }: AppOptions): Shedding {
  // Requests turned away under load: 503 + Retry-After, counted, summarised once a second.
  const shedding = new Shedding(app.log, metrics === undefined ? undefined : (reason) => metrics.shed(reason))
  app.decorate('shedding', shedding)
  // Fair share on /v1 (docs/overload.md): a client over its share is refused before the others.
  const fairAdmission = new FairAdmission({ log: app.log, shedding })
  app.decorate('fairAdmission', fairAdmission)
  app.addHook('onReady', async () => fairAdmission.start())
  // Held refusals are answered before the listener closes: the drain never waits on them.
  app.addHook('preClose', async () => fairAdmission.stop())
  // First of the hooks, so the whole request runs inside its trace; shed 503s stay untraced.
  tracing?.register(app, { refused: (reply) => shedding.refused(reply), draining: () => readiness.draining })
  app.addHook('onClose', async () => shedding.flush())
  // A full chain queue, or a route group's, is shedding too: no warning and stack per request.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // An error answer (a long-poll over its cap's 429 among them) applied no Prefer: wait.
    reply.removeHeader('preference-applied')
    // A full queue: the client's excess (429, held for its Retry-After) when it is over its
    // share, the replica's overload (503) otherwise.
    if (error instanceof OverShareError) return fairAdmission.refuseQueued(request, reply, true, 'chainQueue', error.message)
    const reason = error instanceof ChainBusyError ? 'chainQueue' : error instanceof RouteGroupBusyError ? 'groupQueue' : undefined
    return reason === undefined ? handleError(error, request, reply) : fairAdmission.refuseQueued(request, reply, false, reason, error.message)
  })
  return shedding
}

/** Every request's lifecycle (request-lifecycle.ts): its id, Host check, CORS for any origin, pipelining turn, metrics and access line; unrouted answers. */
function registerRequestHooks (app: App, { config, logger, metrics }: AppOptions, shedding: Shedding, pipelining: Pipelining): void {
  requestLifecycle(app, {
    pipelining,
    metrics,
    fixedHeaders: config.edge.corsOrigins === '*' ? anyOriginHeaders() : undefined,
    // Only from info on: at warn the line would cost every request (a route read, a header
    // read, the shed check) for nothing written.
    access: logger.isLevelEnabled('info') ? accessLog({ log: logger, skip: (reply) => shedding.refused(reply) }) : undefined
  })
  // Only at debug: at info the hook would cost every request for nothing.
  if (logger.isLevelEnabled('debug')) app.addHook('onRequest', logArrival)
  // Unknown paths are 404; a known path with a method it lacks is 405 (OPTIONS 204), as in Go.
  app.setNotFoundHandler(handleUnrouted)
}

/** The OpenAPI document, health, /v1 and the event stream beside it. */
async function registerRoutes (app: App, options: AppOptions, shedding: Shedding): Promise<void> {
  const { config, chain, readiness, metrics } = options
  await app.register(swagger, {
    openapi: {
      info: { title: 'edge-api', description: 'Public read-only /v1 queries of the gonka chain', version: '1' }
    },
    transform: documentMinHeight
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  await app.register(health, { readiness })
  // One head poll shared by every long-poll and event stream, while any waits (src/waiting/head-follower.ts).
  const follower = new HeadFollower(chain.heads, chain.clock)
  // One count of held long-polls and event streams: the caps are on both together.
  const quota = new WaitQuota(config.waiting)
  await app.register(v1, {
    prefix: '/v1',
    chain,
    build: options.build,
    shedding,
    loadShedding: options.loadShedding,
    exposeOptionalRoutes: config.exposeOptionalRoutes,
    verifyTuning: options.verifyTuning,
    cache: options.cache,
    follower,
    quota,
    onHeld: metrics === undefined ? undefined : (held: number) => metrics.waiting.heldRequests(held),
    onReleased: metrics === undefined ? undefined : (reason, seconds) => metrics.waiting.heldReleased(reason, seconds)
  })
  // Beside /v1's routes, not among them: never shed with a 503, nothing for the answer cache.
  await app.register(events, { prefix: '/v1', chain, follower, quota, metrics: metrics?.waiting })
}

export type EdgeApp = Awaited<ReturnType<typeof buildApp>>

declare module 'fastify' {
  interface FastifyInstance {
    /** Admission's one hook (src/admission/admit.ts); /v1 adds its load steps to it. */
    admission: Admission
  }
}

/**
 * The public edge (docs/clients-and-limits.md), before any work: CORS first, so a blocked
 * route's 403 and a limit's 429 are readable by a page too; then admission's one hook, in its
 * order (src/admission/admit.ts): blocked routes, the client, the limit, and on /v1 load.
 */
async function registerEdges<Provider extends FastifyTypeProvider> (app: FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger, Provider>, { config, logger, metrics, rateCounter }: AppOptions): Promise<void> {
  const { corsOrigins, blockedRoutes, rateLimit } = config.edge
  // Any origin's headers are fixed, set by the request's lifecycle (registerRequestHooks).
  if (corsOrigins !== undefined && corsOrigins !== '*') await app.register(cors, corsOptions(corsOrigins))
  const limiter = rateLimit === undefined ? undefined : new RateLimiter({ limit: rateLimit, pool: rateCounter, log: logger, onRefused: metrics === undefined ? undefined : () => metrics.refused('rate_limit') })
  app.decorate('admission', Admission.register(app as unknown as FastifyInstance, { shedding: app.shedding, blockedRoutes, limiter }))
}
