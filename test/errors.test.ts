import t from 'tap'
import { badRequest, ChainAnswerTooLargeError, ChainBadAnswerError, ChainBusyError, ChainStatusError, ChainTimeoutError, ChainUnavailableError, GrpcCode, HttpError, notFound } from '../src/errors.js'

t.test('HttpError carries a status, a client-safe message and headers', async (t) => {
  const error = new HttpError(418, 'short and stout', { 'x-a': 'b' })
  t.ok(error instanceof Error)
  t.match(error, { name: 'HttpError', statusCode: 418, message: 'short and stout', headers: { 'x-a': 'b' } })
  t.match(badRequest('bad'), { statusCode: 400, message: 'bad', headers: {} })
  t.match(notFound('gone'), { statusCode: 404, message: 'gone' })
})

t.test('gateway gRPC codes map to HTTP statuses as SPEC §3 says', async (t) => {
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

t.test('bad gateway answers (502) have stable codes and fixed client messages; the detail is the cause', async (t) => {
  const large = new ChainAnswerTooLargeError(65536, 'http://10.1.2.3:1317 answered more for /x')
  t.match(large, { name: 'ChainAnswerTooLargeError', code: 'CHAIN_ANSWER_TOO_LARGE', statusCode: 502, message: 'chain answer too large' })
  t.equal(large.cause, 'http://10.1.2.3:1317 answered more for /x: over the limit of 65536 bytes (EDGE_API_CHAIN_MAX_RESPONSE)')
  const bad = new ChainBadAnswerError('chain answered 200 with a body that is not JSON for http://10.1.2.3:1317/x')
  t.match(bad, { name: 'ChainBadAnswerError', code: 'CHAIN_BAD_ANSWER', statusCode: 502, message: 'chain answer is not JSON' })
  t.match(bad.cause, /not JSON/)
})
