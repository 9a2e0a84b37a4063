import type { FastifyRequest } from 'fastify'
import t from 'tap'
import { isPreflight } from '../../src/admission/preflight.js'

const request = (method: string, headers: Record<string, string>): FastifyRequest => ({ method, headers }) as unknown as FastifyRequest

t.test('a preflight is an OPTIONS asking for a method; a plain OPTIONS, or a GET with the header, is not', async (t) => {
  t.equal(isPreflight(request('OPTIONS', { 'access-control-request-method': 'GET' })), true)
  t.equal(isPreflight(request('OPTIONS', {})), false, 'a plain OPTIONS (no Access-Control-Request-Method) is refused like any request')
  t.equal(isPreflight(request('GET', { 'access-control-request-method': 'GET' })), false, 'only OPTIONS is a preflight')
})
