import t from 'tap'
import { clientRequestId, RequestIds } from '../../src/http/request-id.js'
import { startListeningApp } from '../fixtures/listening-app.js'
import { until } from '../../harness/wait.js'

t.test('our ids count up in base 36, one sequence per RequestIds', async (t) => {
  const ids = new RequestIds()
  const first = Array.from({ length: 37 }, () => ids.next())
  t.same(first.slice(0, 3), ['r1', 'r2', 'r3'])
  t.equal(first[34], 'rz')
  t.equal(first[35], 'r10')
  t.equal(new RequestIds().next(), 'r1', 'another sequence starts at r1')
})

t.test("a request's own X-Request-Id is kept only when well-formed", async (t) => {
  for (const id of ['r1', 'router-7f3a.1', '7F000001:C350_7F000001:4A38_6931A2B0_0001:1A2B', '0b5e0f5c-8d47-4a3c-9d3e-1c2b3a4d5e6f', 'a'.repeat(64)]) {
    t.equal(clientRequestId({ 'x-request-id': id }), id, id)
  }
  for (const id of ['', 'bad id with spaces', 'a'.repeat(65), 'a, b', 'é', 'x\ny']) {
    t.equal(clientRequestId({ 'x-request-id': id }), undefined, JSON.stringify(id))
  }
  t.equal(clientRequestId({}), undefined, 'none sent')
})

// Over a real socket: what an operator reads in the log and a caller reads in the answer.
t.test('a client claiming another request\'s id keeps our own id in the log, its own beside it, and gets its own back', async (t) => {
  const service = await startListeningApp(t, { announceMs: 0, budgetMs: 1000 })
  const from = service.logs.length
  const plain = await fetch(`${service.origin}/healthz`)
  const plainId = plain.headers.get('x-request-id') as string
  t.match(plainId, /^r[0-9a-z]+$/, 'an answer to a request without an id carries ours')
  const claiming = await fetch(`${service.origin}/healthz`, { headers: { 'x-request-id': plainId } })
  t.equal(claiming.headers.get('x-request-id'), plainId, 'a well-formed id is echoed: the caller finds its own id in the answer')
  const malformed = await fetch(`${service.origin}/v1/nope`, { headers: { 'x-request-id': 'not an id' } })
  t.equal(malformed.status, 404)
  const malformedId = malformed.headers.get('x-request-id') as string
  t.match(malformedId, /^r[0-9a-z]+$/, 'a malformed one is not: the answer carries ours')

  const accessLines = () => service.logs.slice(from).filter((l) => l.msg === 'request')
  // The access line is written as the answer goes out, a moment after the client has it.
  await until(() => accessLines().length >= 3, 'three access lines')
  await new Promise((resolve) => setTimeout(resolve, 50))
  const access = accessLines()
  t.equal(access.length, 3, 'one access line each')
  const [first, second, third] = access
  t.match(first, { reqId: plainId, route: '/healthz', status: 200 })
  t.notOk('clientReqId' in (first as object), 'no clientReqId when none was sent')
  t.match(second, { route: '/healthz', status: 200, clientReqId: plainId })
  t.not(second?.reqId, plainId, 'the claimed id never becomes ours: the two requests stay apart in the log')
  t.match(second?.reqId, /^r[0-9a-z]+$/)
  t.equal(access.filter((l) => l.reqId === plainId).length, 1, 'exactly one request is known by that reqId')
  t.match(third, { reqId: malformedId, route: null, status: 404 })
  t.notOk('clientReqId' in (third as object), 'a malformed id is not logged')
})
