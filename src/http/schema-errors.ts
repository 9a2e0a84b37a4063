import type { FastifySchemaValidationError } from 'fastify'

/** Ajv runs with `verbose`, so each error carries the schema that failed. */
export type FastifySchemaValidationErrorWithSchema = FastifySchemaValidationError & {
  parentSchema?: { description?: string, 'x-error'?: string }
}

const PLACE: Readonly<Record<string, string>> = {
  params: 'path parameter',
  querystring: 'query parameter',
  body: 'body field',
  headers: 'header'
}

/**
 * Turns Ajv's validation errors into one sentence a client can act on, e.g.
 * "invalid path parameter id: must be a decimal unsigned 64-bit integer". A schema may
 * carry `x-error` with the exact message the Go service used for that mistake.
 */
export function formatSchemaError (errors: FastifySchemaValidationError[], dataVar: string): Error {
  const error = errors[0] as FastifySchemaValidationErrorWithSchema
  const place = PLACE[dataVar] ?? dataVar
  const missing = (error.params as { missingProperty?: string }).missingProperty
  if (error.keyword === 'required' && missing !== undefined) {
    return new Error(`missing ${place} ${missing}`)
  }
  const schema = error.parentSchema ?? {}
  if (schema['x-error'] !== undefined) return new Error(schema['x-error'])
  const name = error.instancePath.slice(1) || dataVar
  const rule = schema.description ?? error.message ?? 'is not valid'
  return new Error(`invalid ${place} ${name}: ${rule}`)
}
