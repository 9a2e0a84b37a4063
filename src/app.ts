import Fastify, { LogController, type FastifyError } from 'fastify'
import swagger from '@fastify/swagger'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { DestinationStream, Logger } from 'pino'
import type { ChainClient } from './chain/client.js'
import type { Config } from './config.js'
import { handleError, handleFrameworkError, handleNotFound, MAX_PARAM_LENGTH } from './error-handler.js'
import { ChainBusyError } from './errors.js'
import { accessLog, logArrival } from './http/access-log.js'
import type { LoadShedding } from './http/admission.js'
import { Shedding } from './http/shedding.js'
import { createLogger } from './logger.js'
import { Readiness } from './readiness.js'
import { formatSchemaError } from './schema-errors.js'
import { health } from './routes/health.js'
import { v1 } from './routes/v1/index.js'

export interface AppOptions {
  readonly config: Config
  readonly chain: ChainClient
  /** Where log lines go; stdout by default. */
  readonly logStream?: DestinationStream
  /** The logger to use (main.ts shares its own); by default one on logStream at config.logLevel. */
  readonly logger?: Logger
  /** Readiness and its drain latch (main.ts drives it on SIGTERM); by default a new one over `chain`. */
  readonly readiness?: Readiness
  /** Overrides of the /v1 load-shedding thresholds (tests trip them on purpose). */
  readonly loadShedding?: LoadShedding
}

// Server timeouts, set deliberately rather than inherited:
// - keepAliveTimeout 75 s: an idle keep-alive socket must outlive the peer's own idle timeout
//   (HAProxy `timeout http-keep-alive 10s`, nginx/ALB 60 s); if we closed first, the peer could
//   write a request onto a socket we are closing and its client would see a 502. It never delays
//   shutdown: from the drain latch on every response carries Connection: close, and idle sockets
//   are closed when the listener closes (fastify/fastify#7044).
// - headersTimeout 15 s: a client (or slowloris) gets that long to send its headers; the router
//   sends them at once.
// - requestTimeout 30 s: the whole request must have arrived by then (Node requires it to be
//   >= headersTimeout; our requests have no body). It does not bound handling time: the chain
//   timeout and the shutdown budget do.
export const SERVER_TIMEOUTS = { keepAliveTimeout: 75_000, headersTimeout: 15_000, requestTimeout: 30_000 } as const

let requestCounter = 0

/** Builds the edge-api Fastify app. Never listens and never touches process: main.ts does. */
// The return type is inferred: it carries the TypeBox type provider.
export async function buildApp (options: AppOptions) {
  const { config, chain } = options
  const readiness = options.readiness ?? new Readiness(chain)
  const logger = options.logger ?? createLogger(config.logLevel, options.logStream)
  const app = Fastify({
    loggerInstance: logger,
    ...SERVER_TIMEOUTS,
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
    ajv: { customOptions: { verbose: true, keywords: ['x-error', 'x-proto-enum'] } },
    schemaErrorFormatter: formatSchemaError
  }).withTypeProvider<TypeBoxTypeProvider>()

  // Requests turned away under load: 503 + Retry-After, counted, summarised once a second.
  const shedding = new Shedding(app.log)
  app.decorate('shedding', shedding)
  app.addHook('onClose', async () => shedding.flush())
  // A full chain queue is shedding too: no warning and stack per request.
  app.setErrorHandler((error: FastifyError, request, reply) => error instanceof ChainBusyError
    ? reply.send(shedding.refuse(reply, 'chainQueue', error.message))
    : handleError(error, request, reply))
  app.addHook('onResponse', accessLog({ skip: (reply) => shedding.refused(reply) }))
  // Only at debug: at info the hook would cost every request for nothing.
  if (logger.isLevelEnabled('debug')) app.addHook('onRequest', logArrival)
  app.setNotFoundHandler(handleNotFound)

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
  await app.register(v1, { prefix: '/v1', chain, shedding, loadShedding: options.loadShedding })
  return app
}

export type EdgeApp = Awaited<ReturnType<typeof buildApp>>
