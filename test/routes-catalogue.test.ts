import t from 'tap'
import { routesFor } from '../scripts/compat/routes.js'
import { buildTestApp } from './fixtures/app.js'
import { codes, markdownTable, repoFile } from './fixtures/markdown.js'
import { matches, ROUTES } from '../harness/routes.js'

// The route catalogue (harness/routes.ts) against what serves the routes and every
// copy of the list: a route added to one and not the other fails here, naming the copy.
// test/app.test.ts checks it against the OpenAPI document; the demo prints its examples.

const GET = ROUTES.filter((r) => r.method === 'GET')

t.test('every example of the catalogue answers 200 (optional routes exposed)', async (t) => {
  const { app } = await buildTestApp(t, { env: { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' } })
  for (const route of GET) {
    t.ok(route.example !== undefined && matches(route.path, route.example), `${route.path}: its example is one of its requests`)
    const res = await app.inject(route.example as string)
    t.equal(res.statusCode, 200, `GET ${route.example}`)
  }
})

t.test('docs/routes.md lists every route of the catalogue, and no other', async (t) => {
  const listed = markdownTable(repoFile('docs/routes.md'), 'route').flatMap((row) => {
    let method = 'GET'
    return codes(row[0]).map((span) => {
      const [verb, url] = /^(GET|POST) /.test(span) ? span.split(' ') as [string, string] : [method, span]
      method = verb
      return { method, url: url.replace(/\?.*$/, '') }
    })
  })
  for (const route of ROUTES) {
    t.ok(listed.some((l) => l.method === route.method && matches(route.path, l.url)), `${route.method} ${route.path} is in the table`)
  }
  for (const l of listed) t.ok(ROUTES.some((r) => r.method === l.method && matches(r.path, l.url)), `${l.method} ${l.url} is in the catalogue`)
})

t.test('the router refuses exactly the optional routes (the rule compose/router/render.sh writes)', async (t) => {
  const rule = /acl optional_route path,url_dec -m reg -i (\S+)/.exec(repoFile('compose/router/render.sh'))?.[1]
  t.ok(rule !== undefined, 'the rule was found')
  // In the shell script's double quotes, the regex's $ is written \$.
  const optional = new RegExp((rule as string).replaceAll('\\$', '$'), 'i')
  for (const route of ROUTES) {
    const path = route.example ?? route.path
    t.equal(optional.test(path), route.kind === 'optional', `${route.method} ${path}`)
  }
})

t.test('npm run compat compares every GET route of the catalogue but the probes and the document', async (t) => {
  const compared = routesFor(
    { blsEpoch: '7', epoch: '42', height: '100', pocEpoch: '90', address: 'gonka1x' },
    { requestId: 'ab', exemptionId: '1', exemptionAccount: 'gonka1y', pubkey: 'AAAA' }
  ).map((r) => r.path)
  for (const route of GET.filter((r) => r.kind !== 'probe' && r.kind !== 'document')) {
    t.ok(compared.some((url) => matches(route.path, url)), `${route.path} is compared`)
  }
  for (const url of compared) t.ok(GET.some((r) => matches(r.path, url)), `${url} is in the catalogue`)
})
