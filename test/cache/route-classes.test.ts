import t from 'tap'
import { buildTestApp } from '../fixtures/app.js'
import { ROUTE_CLASSES, routeClass } from '../../src/cache/route-classes.js'

t.test('every /v1 route has a class and a reason, and every listed route exists', async (t) => {
  const { app } = await buildTestApp(t)
  for (const [route, entry] of Object.entries(ROUTE_CLASSES)) {
    const [method, url] = route.split(' ') as [string, string]
    t.ok(app.hasRoute({ method: method as 'GET', url }), `${route} is served`)
    t.ok(entry.why.length > 10, `${route}: says why`)
  }
  t.equal(routeClass('GET', '/v1/epochs/:epoch'), 'latest')
  t.equal(routeClass('GET', '/v1/debug/verify/:height'), 'fixed')
  t.equal(routeClass('GET', '/v1/nothing'), undefined)
})
