import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from '../errors.js'

const INTERNAL = 'Internal Server Error'

/**
 * Every error becomes {"message": "..."}. Client errors and chain errors say what went
 * wrong; anything unexpected is a bare 500 with the detail in the log only.
 */
export function handleError (error: FastifyError | HttpError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof HttpError) {
    // A client's mistake is routine: at debug, without a stack (at info the access line says
    // enough: one line per request). A chain failure is worth a warning.
    if (error.statusCode < 500) request.log.debug({ statusCode: error.statusCode, reason: error.message }, 'request failed')
    else request.log.warn({ err: error, cause: describeCause(error.cause) }, 'request failed')
    return reply.code(error.statusCode).headers(error.headers).send({ message: error.message })
  }
  const statusCode = (error as FastifyError).statusCode
  if (statusCode !== undefined && statusCode < 500) {
    // Fastify's own client errors: malformed JSON, bad content type, validation.
    request.log.debug({ err: error }, 'bad request')
    return reply.code(statusCode).send({ message: error.message })
  }
  request.log.error({ err: error }, 'request failed unexpectedly')
  return reply.code(500).send({ message: INTERNAL })
}

/** The longest path value the router accepts; longer ones are refused before any route runs. */
export const MAX_PARAM_LENGTH = 2048

/**
 * Errors the router raises before any route runs (a malformed percent-encoding, a path value
 * over MAX_PARAM_LENGTH): the same envelope, and the URL is not echoed back.
 */
export function handleFrameworkError (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const message = error.code === 'FST_ERR_BAD_URL'
    ? 'invalid URL: malformed percent-encoding'
    : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? `invalid URL: a path value is longer than ${MAX_PARAM_LENGTH} characters`
      : 'Bad Request'
  return reply.code(error.statusCode ?? 400).send({ message })
}

export function handleNotFound (_request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.code(404).send({ message: 'Not Found' })
}

/** The underlying failure in one line for the log (pino would print an Error under a custom key as {}). */
function describeCause (cause: unknown): string | undefined {
  if (cause === undefined) return undefined
  if (!(cause instanceof Error)) return String(cause)
  const code = (cause as { code?: unknown }).code
  return `${cause.name}: ${cause.message}${typeof code === 'string' ? ` (${code})` : ''}`
}
