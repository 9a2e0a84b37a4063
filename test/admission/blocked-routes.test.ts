import t from 'tap'
import { BLOCKED_MESSAGE, isBlocked } from '../../src/admission/blocked-routes.js'
import { buildTestApp } from '../fixtures/app.js'

t.test('a blocked route is 403 {"message"} before any chain request; the others are served', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: { EDGE_API_BLOCKED_ROUTES: 'participants epochs/*/participants' } })
  const asked = sim.requests.length
  for (const url of ['/v1/participants', '/v1/participants/gonka1abc?x=1', '/v1/epochs/current/participants', '/v1/%70articipants']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 403, url)
    t.same(res.json(), { message: BLOCKED_MESSAGE })
  }
  t.equal(sim.requests.length, asked, 'the chain was never asked')
  t.equal((await app.inject('/v1/epochs/latest')).statusCode, 200, 'a prefix blocks its own path and below, not its siblings')
  t.equal((await app.inject('/healthz')).statusCode, 200)
})

t.test('with none configured, the same routes are served', async (t) => {
  const { app } = await buildTestApp(t)
  t.equal((await app.inject('/v1/participants')).statusCode, 200)
})

t.test('matching: segment by segment, below /v1 only, malformed escapes left to the router', async (t) => {
  const prefixes = [['poc-batches'], ['epochs', '*', 'participants']]
  t.ok(isBlocked('/v1/poc-batches', prefixes))
  t.ok(isBlocked('/v1/poc-batches/7/x', prefixes))
  t.notOk(isBlocked('/v1/poc-batches-old', prefixes), 'a whole segment, not a string prefix')
  t.notOk(isBlocked('/v1/epochs/7', prefixes), 'shorter than the prefix')
  t.notOk(isBlocked('/healthz', prefixes))
  t.notOk(isBlocked('/v1/poc%zzbatches', prefixes))
})
