import Fastify, { LogController, type FastifyError } from 'fastify'
import swagger from '@fastify/swagger'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Logger } from 'pino'
import type { AnswerCache } from './cache/answer-cache.js'
import type { ChainClient } from './chain/client.js'
import type { Config } from './config.js'
import { ChainBusyError } from './errors.js'
import { accessLog, logArrival } from './http/access-log.js'
import type { LoadShedding } from './http/admission.js'
import { handleError, handleFrameworkError, MAX_PARAM_LENGTH } from './http/error-handler.js'
import { handleUnrouted } from './http/methods.js'
import { serverTimeoutOptions, type ServerTimeouts } from './http/server-timeouts.js'
import { Shedding } from './http/shedding.js'
import type { Readiness } from './readiness.js'
import { formatSchemaError } from './http/schema-errors.js'
import { instrumentRequests, type RequestMetrics } from './metrics/requests.js'
import { health } from './routes/health.js'
import { v1 } from './routes/v1/index.js'
import type { VerifyTuning } from './routes/v1/verify.js'

export interface AppOptions {
  readonly config: Config
  readonly chain: ChainClient
  /** Readiness and its drain latch, which the drain sets (service.ts wires both). */
  readonly readiness: Readiness
  /** Where the app's log lines go (service.ts passes the one the process logs with). */
  readonly logger: Logger
  /** Overrides of the /v1 load-shedding thresholds (tests trip them on purpose). */
  readonly loadShedding?: LoadShedding
  /** Overrides of the server timeouts (tests shorten them); SERVER_TIMEOUTS by default. */
  readonly serverTimeouts?: Partial<ServerTimeouts>
  /** Overrides of the optional verify routes' limits (tests reach them on purpose). */
  readonly verifyTuning?: VerifyTuning
  /** Where request metrics go; none when metrics are off (EDGE_API_METRICS_PORT=off). */
  readonly metrics?: RequestMetrics | undefined
  /** Built /v1 answers (EDGE_API_CACHE_SIZE); none when off. */
  readonly cache?: AnswerCache | undefined
}

/** Builds the edge-api Fastify app. Never listens and never touches process (see service.ts). */
// The return type is inferred: it carries the TypeBox type provider.
export async function buildApp (options: AppOptions) {
  const { config, chain, readiness, logger } = options
  // Per app, so two apps in one process (tests, the bench) never share a sequence.
  let requestCounter = 0
  const app = Fastify({
    loggerInstance: logger,
    ...serverTimeoutOptions(options.serverTimeouts),
    // Requests that reach an open keep-alive socket after close() get 503 + Connection: close
    // without running a handler, so a balancer may safely retry them elsewhere.
    return503OnClosing: true,
    // 'idle' reaps idle sockets when the listener closes; never `true`, which would destroy
    // requests still in flight. Forced close is the lifecycle's job, at its deadline.
    forceCloseConnections: 'idle',
    // Fastify's two lines per request ("incoming request", "request completed") give way to
    // one access line (src/http/access-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    // A well-formed id from the router or client follows the request through our logs.
    genReqId: (req) => {
      const id = req.headers['x-request-id']
      return typeof id === 'string' && /^[\w.:-]{1,64}$/.test(id) ? id : `r${(++requestCounter).toString(36)}`
    },
    // Long path values must reach validation and get a 400 that says what is wrong,
    // not the router's 404 (Fastify's default limit is 100 characters).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: handleFrameworkError,
    ajv: { customOptions: { verbose: true, keywords: ['x-error', 'x-proto-enum', 'x-go-int', 'x-api-enum', 'x-api-bytes'] } },
    schemaErrorFormatter: formatSchemaError
  }).withTypeProvider<TypeBoxTypeProvider>()

  // Requests turned away under load: 503 + Retry-After, counted, summarised once a second.
  const { metrics } = options
  const shedding = new Shedding(app.log, metrics === undefined ? undefined : (reason) => metrics.shed(reason))
  app.decorate('shedding', shedding)
  app.addHook('onClose', async () => shedding.flush())
  // A full chain queue is shedding too: no warning and stack per request.
  app.setErrorHandler((error: FastifyError, request, reply) => error instanceof ChainBusyError
    ? reply.send(shedding.refuse(reply, 'chainQueue', error.message))
    : handleError(error, request, reply))
  app.addHook('onResponse', accessLog({ skip: (reply) => shedding.refused(reply) }))
  // Only at debug: at info the hook would cost every request for nothing.
  if (logger.isLevelEnabled('debug')) app.addHook('onRequest', logArrival)
  // Unknown paths are 404; a known path with a method it lacks is 405 (OPTIONS 204), as in Go.
  app.setNotFoundHandler(handleUnrouted)
  if (metrics !== undefined) instrumentRequests(app, metrics)

  // From the drain latch on, every response closes its connection, so keep-alive clients and
  // the router's reused connections move to another replica before the listener closes, and
  // no socket is left idling until keepAliveTimeout once it does (fastify/fastify#7044).
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (readiness.draining) reply.header('connection', 'close')
    done(null, payload)
  })

  await app.register(swagger, {
    openapi: {
      info: { title: 'edge-api', description: 'Public read-only /v1 queries of the gonka chain', version: '1' }
    }
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  await app.register(health, { readiness })
  await app.register(v1, {
    prefix: '/v1',
    chain,
    shedding,
    loadShedding: options.loadShedding,
    exposeOptionalRoutes: config.exposeOptionalRoutes,
    verifyTuning: options.verifyTuning,
    cache: options.cache
  })
  return app
}

export type EdgeApp = Awaited<ReturnType<typeof buildApp>>
