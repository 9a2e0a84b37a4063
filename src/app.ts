import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { DestinationStream } from 'pino'
import type { ChainClient } from './chain/client.js'
import type { Config } from './config.js'
import { handleError, handleNotFound } from './error-handler.js'
import { createLogger } from './logger.js'
import { formatSchemaError } from './schema-errors.js'
import { health } from './routes/health.js'
import { v1 } from './routes/v1/index.js'

export interface AppOptions {
  readonly config: Config
  readonly chain: ChainClient
  /** Where log lines go; stdout by default. */
  readonly logStream?: DestinationStream
}

let requestCounter = 0

/** Builds the edge-api Fastify app. Never listens and never touches process: main.ts does. */
// The return type is inferred: it carries the TypeBox type provider.
export async function buildApp (options: AppOptions) {
  const { config, chain } = options
  const app = Fastify({
    loggerInstance: createLogger(config.logLevel, options.logStream),
    // A well-formed id from the router or client follows the request through our logs.
    genReqId: (req) => {
      const id = req.headers['x-request-id']
      return typeof id === 'string' && /^[\w.:-]{1,64}$/.test(id) ? id : `r${(++requestCounter).toString(36)}`
    },
    // Long path values must reach validation and get a 400 that says what is wrong,
    // not the router's 404 (Fastify's default limit is 100 characters).
    routerOptions: { maxParamLength: 2048 },
    ajv: { customOptions: { verbose: true, keywords: ['x-error', 'x-proto-enum'] } },
    schemaErrorFormatter: formatSchemaError
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.setErrorHandler(handleError)
  app.setNotFoundHandler(handleNotFound)

  await app.register(swagger, {
    openapi: {
      info: { title: 'edge-api', description: 'Public read-only /v1 queries of the gonka chain', version: '1' }
    }
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  await app.register(health, { chain })
  await app.register(v1, { prefix: '/v1', chain })
  return app
}

export type EdgeApp = Awaited<ReturnType<typeof buildApp>>
