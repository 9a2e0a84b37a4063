import t from 'tap'
import * as errors from '../src/errors.js'
import {
  badRequest, ChainAnswerTooLargeError, ChainBadAnswerError, ChainHeightUnavailableError, ChainBusyError, ChainQueryError, ChainStatusError, ChainTimeoutError,
  ChainUnavailableError, ConfigError, GrpcCode, HttpError, legacyChainQuery, ListenError, MinHeightUnavailableError, notFound, OverShareError
} from '../src/errors.js'

t.test('HttpError carries a status, a client-safe message and headers', async (t) => {
  const error = new HttpError(418, 'short and stout', { 'x-a': 'b' })
  t.ok(error instanceof Error)
  t.match(error, { name: 'HttpError', statusCode: 418, message: 'short and stout', headers: { 'x-a': 'b' } })
  t.match(badRequest('bad'), { statusCode: 400, message: 'bad', headers: {} })
  t.match(notFound('gone'), { statusCode: 404, message: 'gone' })
})

t.test('gateway gRPC codes map to HTTP statuses as docs/routes.md says', async (t) => {
  const expected: Array<[number, number]> = [
    [GrpcCode.NotFound, 404], [GrpcCode.InvalidArgument, 400], [GrpcCode.Unauthenticated, 401],
    [GrpcCode.PermissionDenied, 403], [GrpcCode.ResourceExhausted, 429], [GrpcCode.Unavailable, 503],
    [2, 500], [4, 500], [13, 500], [99, 500]
  ]
  for (const [grpc, http] of expected) {
    const error = new ChainStatusError(grpc, 'from the chain')
    t.equal(error.statusCode, http, `${grpc} → ${http}`)
    t.equal(error.grpcCode, grpc)
    t.equal(error.message, 'from the chain')
  }
})

t.test('transport failures have fixed client messages; the detail is the cause', async (t) => {
  const refused = new ChainUnavailableError(new Error('connect ECONNREFUSED 10.1.2.3:1317'))
  t.match(refused, { statusCode: 503, message: 'chain unavailable' })
  t.match(refused.cause, { message: /ECONNREFUSED/ })
  t.match(new ChainTimeoutError(250), { statusCode: 504, message: 'chain query timed out', cause: 'no answer within 250ms' })
  t.match(new ChainBusyError(), { statusCode: 503, headers: { 'retry-after': '1' } })
})

t.test('every error class in the catalog has its own stable code', async (t) => {
  const status = new ChainStatusError(13, 'internal')
  const expected: Array<[Error & { code: string }, string]> = [
    [new HttpError(400, 'x'), 'EDGE_ERR_HTTP'],
    [status, 'EDGE_ERR_CHAIN_STATUS'],
    [new ChainQueryError('failed', status), 'EDGE_ERR_CHAIN_QUERY'],
    [new ChainUnavailableError('down'), 'EDGE_ERR_CHAIN_UNAVAILABLE'],
    [new ChainTimeoutError(1), 'EDGE_ERR_CHAIN_TIMEOUT'],
    [new ChainBusyError(), 'EDGE_ERR_CHAIN_BUSY'],
    [new OverShareError(), 'EDGE_ERR_OVER_SHARE'],
    [new ChainAnswerTooLargeError(1, 'x'), 'EDGE_ERR_CHAIN_ANSWER_TOO_LARGE'],
    [new ChainBadAnswerError('x'), 'EDGE_ERR_CHAIN_BAD_ANSWER'],
    [new ChainHeightUnavailableError('every node is behind'), 'EDGE_ERR_CHAIN_HEIGHT_UNAVAILABLE'],
    [new MinHeightUnavailableError(12, 10, 'within 2000 ms'), 'EDGE_ERR_MIN_HEIGHT_UNAVAILABLE'],
    [new ConfigError('EDGE_API_PORT', 'bad'), 'EDGE_ERR_CONFIG'],
    [new ListenError('127.0.0.1', 1, Object.assign(new Error('listen EACCES'), { code: 'EACCES' })), 'EDGE_ERR_LISTEN']
  ]
  for (const [error, code] of expected) t.equal(error.code, code, error.name)
  const classes = Object.values(errors).filter((value) => typeof value === 'function' && value.prototype instanceof Error)
  t.equal(classes.length, expected.length, 'every exported class is listed here')
})

t.test('ConfigError names the variable', async (t) => {
  t.match(new ConfigError('EDGE_API_PORT', 'EDGE_API_PORT="x" is invalid'), { name: 'ConfigError', variable: 'EDGE_API_PORT', message: 'EDGE_API_PORT="x" is invalid' })
})

t.test("legacyChainQuery answers a gateway error with the route's own 500; transport failures pass", async (t) => {
  t.equal(await legacyChainQuery(Promise.resolve(7), () => 'unused'), 7)
  const status = new ChainStatusError(GrpcCode.NotFound, 'key not found')
  const error = await legacyChainQuery(Promise.reject(status), (err) => `Failed to query x: ${err.message}`).catch((err: unknown) => err)
  t.ok(error instanceof ChainQueryError)
  t.match(error, { statusCode: 500, message: 'Failed to query x: key not found', grpcCode: GrpcCode.NotFound, name: 'ChainQueryError' })
  t.equal((error as ChainQueryError).cause, status, 'the chain error is the cause, for the log')
  const down = new ChainUnavailableError('refused')
  await t.rejects(legacyChainQuery(Promise.reject(down), () => 'unused'), down)
})

t.test('bad gateway answers (502) have stable codes and fixed client messages; the detail is the cause', async (t) => {
  const large = new ChainAnswerTooLargeError(65536, 'http://10.1.2.3:1317 answered more for /x')
  t.match(large, { name: 'ChainAnswerTooLargeError', code: 'EDGE_ERR_CHAIN_ANSWER_TOO_LARGE', statusCode: 502, message: 'chain answer too large' })
  t.equal(large.cause, 'http://10.1.2.3:1317 answered more for /x: over the limit of 65536 bytes (EDGE_API_CHAIN_MAX_RESPONSE)')
  const bad = new ChainBadAnswerError('chain answered 200 with a body that is not JSON for http://10.1.2.3:1317/x')
  t.match(bad, { name: 'ChainBadAnswerError', code: 'EDGE_ERR_CHAIN_BAD_ANSWER', statusCode: 502, message: 'chain answer is not JSON' })
  t.match(bad.cause, /not JSON/)
})
