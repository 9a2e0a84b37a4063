import t from 'tap'
import type { FastifySchemaValidationError } from 'fastify'
import { formatSchemaError } from '../../src/http/schema-errors.js'

const error = (fields: Partial<FastifySchemaValidationError> & { parentSchema?: object }): FastifySchemaValidationError =>
  ({ keyword: 'pattern', instancePath: '/id', schemaPath: '#', params: {}, message: 'must match pattern "^x$"', ...fields }) as FastifySchemaValidationError

t.test('names the place and the field, and says what is allowed', async (t) => {
  t.equal(formatSchemaError([error({ parentSchema: { description: 'must be a decimal unsigned 64-bit integer' } })], 'params').message,
    'invalid path parameter id: must be a decimal unsigned 64-bit integer')
  t.equal(formatSchemaError([error({ instancePath: '/chain', parentSchema: {} })], 'querystring').message,
    'invalid query parameter chain: must match pattern "^x$"', 'falls back to the validator message')
  t.equal(formatSchemaError([error({ instancePath: '/value', message: undefined })], 'body').message,
    'invalid body field value: is not valid')
  t.equal(formatSchemaError([error({ instancePath: '' })], 'headers').message, 'invalid header headers: must match pattern "^x$"')
  t.equal(formatSchemaError([error({ instancePath: '/a' })], 'cookies').message, 'invalid cookies a: must match pattern "^x$"')
})

t.test('a missing required field is called missing', async (t) => {
  t.equal(formatSchemaError([error({ keyword: 'required', instancePath: '', params: { missingProperty: 'chain' } })], 'querystring').message,
    'missing query parameter chain')
})

t.test('a schema can carry the exact message the Go service used', async (t) => {
  t.equal(formatSchemaError([error({ parentSchema: { 'x-error': 'Invalid epoch id', description: 'ignored' } })], 'params').message, 'Invalid epoch id')
})
