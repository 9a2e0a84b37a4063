import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'

t.test('GET /v1/status answers ok without touching the chain', async (t) => {
  const { app, sim } = await buildTestApp(t)
  const res = await app.inject('/v1/status')
  t.equal(res.statusCode, 200)
  t.equal(res.body, '{"status":"ok"}')
  t.equal(sim.count(), 0)
})
