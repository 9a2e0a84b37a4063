import { METHODS } from 'node:http'
import t from 'tap'
import { CLIENT_ERROR_ROUTE, SHED_REASONS, UNKNOWN_METHOD, UNMATCHED_ROUTE } from '../../src/metrics/labels.js'

t.test('the route labels of requests without a route cannot be taken for a route pattern', async (t) => {
  for (const label of [UNMATCHED_ROUTE, CLIENT_ERROR_ROUTE]) t.notOk(label.startsWith('/'), `${label}: every route pattern starts with /`)
  t.not(UNMATCHED_ROUTE, CLIENT_ERROR_ROUTE)
})

t.test('the method label of a request Node could not read is no HTTP method', async (t) => {
  t.notOk(METHODS.includes(UNKNOWN_METHOD.toUpperCase()))
})

t.test('the shed reasons are one closed list without repeats, under-pressure\'s three first', async (t) => {
  t.equal(new Set(SHED_REASONS).size, SHED_REASONS.length)
  t.same(SHED_REASONS.slice(0, 3), ['eventLoopDelay', 'eventLoopUtilization', 'heapUsedBytes'])
})
