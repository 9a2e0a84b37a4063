import t from 'tap'
import type { FastifySchemaValidationError } from 'fastify'
import { formatSchemaError } from '../../src/http/schema-errors.js'

const error = (fields: Partial<FastifySchemaValidationError> & { parentSchema?: object, data?: unknown }): FastifySchemaValidationError =>
  ({ keyword: 'pattern', instancePath: '/id', schemaPath: '#', params: {}, message: 'must match pattern "^x$"', data: 'x', ...fields }) as FastifySchemaValidationError

t.test('path and query parameters get the Go binder\'s envelope, naming the field and what is allowed', async (t) => {
  t.equal(formatSchemaError([error({ parentSchema: { description: 'must be a bech32 address' } })], 'params').message,
    'Invalid format for parameter id: must be a bech32 address')
  t.equal(formatSchemaError([error({ instancePath: '/chain', parentSchema: {} })], 'querystring').message,
    'Invalid format for parameter chain: must match pattern "^x$"', 'falls back to the validator message')
})

t.test('other places keep a plain sentence', async (t) => {
  t.equal(formatSchemaError([error({ instancePath: '/value', message: undefined })], 'body').message,
    'invalid body field value: is not valid')
  t.equal(formatSchemaError([error({ instancePath: '' })], 'headers').message, 'invalid header headers: must match pattern "^x$"')
  t.equal(formatSchemaError([error({ instancePath: '/a' })], 'cookies').message, 'invalid cookies a: must match pattern "^x$"')
})

t.test('a missing required query parameter in the Go binder\'s words', async (t) => {
  t.equal(formatSchemaError([error({ keyword: 'required', instancePath: '', params: { missingProperty: 'chain' } })], 'querystring').message,
    'Invalid format for parameter chain: query parameter \'chain\' is required')
  t.equal(formatSchemaError([error({ keyword: 'required', instancePath: '', params: { missingProperty: 'name' } })], 'body').message,
    'missing body field name')
  t.equal(formatSchemaError([error({ keyword: 'required', instancePath: '', params: { missingProperty: 'sid' } })], 'cookies').message,
    'missing cookies sid')
})

t.test('a schema can carry the exact message the Go service used', async (t) => {
  t.equal(formatSchemaError([error({ parentSchema: { 'x-error': 'Invalid epoch id', description: 'ignored' } })], 'params').message, 'Invalid epoch id')
})

t.test('x-go-int gives strconv\'s own words for the value', async (t) => {
  t.equal(formatSchemaError([error({ data: '1.5', parentSchema: { 'x-go-int': 'uint64' } })], 'params').message,
    'Invalid format for parameter id: error binding string parameter: strconv.ParseUint: parsing "1.5": invalid syntax')
})

t.test('an empty path value is refused as Go\'s binder refuses it, before any other rule', async (t) => {
  t.equal(formatSchemaError([error({ data: '', parentSchema: { 'x-error': 'Invalid epoch id' } })], 'params').message,
    'Invalid format for parameter id: parameter \'id\' is empty, can\'t bind its value')
})
