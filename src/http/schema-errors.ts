import type { FastifySchemaValidationError } from 'fastify'
import { goIntegerError, invalidParameter, missingQueryParameter, type GoInteger } from './param-errors.js'

/** Ajv runs with `verbose`, so each error carries the schema that failed and the value. */
export type FastifySchemaValidationErrorWithSchema = FastifySchemaValidationError & {
  parentSchema?: { description?: string, 'x-error'?: string, 'x-go-int'?: GoInteger }
  data?: unknown
}

const PLACE: Readonly<Record<string, string>> = {
  body: 'body field',
  headers: 'header'
}

/**
 * Turns Ajv's validation errors into one sentence a client can act on. Path and query
 * parameters get the Go service's binder wording (http/param-errors.ts), e.g.
 * "Invalid format for parameter chain: query parameter 'chain' is required"; a schema may
 * carry `x-error` with the exact message a Go handler used for that mistake, or
 * `x-go-int` to get strconv's own words for a malformed integer.
 */
export function formatSchemaError (errors: FastifySchemaValidationError[], dataVar: string): Error {
  const error = errors[0] as FastifySchemaValidationErrorWithSchema
  const parameter = dataVar === 'params' || dataVar === 'querystring'
  const missing = (error.params as { missingProperty?: string }).missingProperty
  if (error.keyword === 'required' && missing !== undefined) {
    return new Error(parameter ? missingQueryParameter(missing) : `missing ${PLACE[dataVar] ?? dataVar} ${missing}`)
  }
  const name = error.instancePath.slice(1) || dataVar
  // Go's binder refuses an empty required value before the handler sees it.
  if (dataVar === 'params' && error.data === '') return new Error(invalidParameter(name, `parameter '${name}' is empty, can't bind its value`))
  const schema = error.parentSchema ?? {}
  if (schema['x-error'] !== undefined) return new Error(schema['x-error'])
  if (schema['x-go-int'] !== undefined) return new Error(goIntegerError(name, String(error.data), schema['x-go-int']))
  const rule = schema.description ?? error.message ?? 'is not valid'
  return new Error(parameter ? invalidParameter(name, rule) : `invalid ${PLACE[dataVar] ?? dataVar} ${name}: ${rule}`)
}
