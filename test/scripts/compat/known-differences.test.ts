import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'
import { startChainSimulator } from '../../../harness/chain-simulator/simulator.js'
import { COMPLETED_REQUEST_ID, EPOCHS } from '../../../harness/chain-simulator/data/bls.js'
import { CURRENT_EPOCH } from '../../../harness/chain-simulator/data/epochs.js'
import { main } from '../../../scripts/compat/cli.js'
import { fieldName, KNOWN_DIFFERENCES, reconcile } from '../../../scripts/compat/known-differences.js'
import { canonicalLines, parseJson } from '../../../scripts/compat/json.js'
import { compareServers } from '../../../scripts/compat/run.js'
import { DKG_PHASES, SIGNING_STATUSES } from '../../../src/routes/v1/bls.js'

// edge-api against a server that answers as the newest Go edge-api does where edge-api
// deliberately differs (BLS enums as names, empty lists left out or null): npm run compat lists
// those fields as known differences and exits 0; any other difference still fails.

const j = parseJson
const lines = (text: string): string[] => canonicalLines(j(text))

t.test('reconcile: a known difference is taken as equal, in either direction, and named once', async (t) => {
  const edge = j('{"epoch_data":{"dkg_phase":3}}')
  const goNames = j('{"epoch_data":{"dkg_phase":"DKG_PHASE_COMPLETED"}}')
  t.same(reconcile('/v1/bls/epoch/7', goNames, edge), ['epoch_data.dkg_phase'])
  t.same(canonicalLines(edge), canonicalLines(goNames), 'the candidate now reads as the reference')
  const other = j('{"epoch_data":{"dkg_phase":3}}')
  t.same(reconcile('/v1/bls/epochs/7', other, j('{"epoch_data":{"dkg_phase":"DKG_PHASE_COMPLETED"}}')), ['epoch_data.dkg_phase'], 'edge-api as the reference')

  const participants = j('{"active_participants":{"participants":[{"index":"a","models":[],"ml_nodes":[]},{"index":"b","models":[]}]}}')
  const omitted = j('{"active_participants":{"participants":[{"index":"a"},{"index":"b","models":null}]}}')
  t.same(reconcile('/v1/epochs/current/participants', omitted, participants),
    ['active_participants.participants[].models', 'active_participants.participants[].ml_nodes'])
  t.same(canonicalLines(participants), canonicalLines(omitted))
  t.same(reconcile('/v1/epochs/42/participants', j('{"active_participants":{}}'), j('{"active_participants":{"participants":[]}}')), ['active_participants.participants'])
  t.same(reconcile('/v1/bridge/addresses?chain=ethereum', j('{"addresses":null}'), j('{"addresses":[]}')), ['addresses'])
  t.same(reconcile('/v1/governance/models', j('{"models":[]}'), j('{"models":null}')), ['models'])
  const versions = j('{"api_version":{"commit":"","build_time":""}}')
  t.same(reconcile('/v1/versions', j('{"api_version":{"commit":""}}'), versions), ['api_version.build_time'], 'a field edge-api adds')
  t.same(canonicalLines(versions), lines('{"api_version":{"commit":""}}'))
  t.same(reconcile('/v1/versions', j('{"api_version":{"build_time":""}}'), j('{"api_version":{}}')), ['api_version.build_time'])
})

t.test('reconcile: anything else is left as it is', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['/v1/bls/epoch/7', '{"epoch_data":{"dkg_phase":"DKG_PHASE_FAILED"}}', '{"epoch_data":{"dkg_phase":3}}'],
    ['/v1/bls/epoch/7', '{"epoch_data":{"dkg_phase":"3"}}', '{"epoch_data":{"dkg_phase":3}}'],
    ['/v1/bls/epoch/7', '{"epoch_data":{"dkg_phase":"DKG_PHASE_COMPLETED"}}', '{"epoch_data":{"dkg_phase":3.0}}'],
    ['/v1/bls/signatures/ab', '{"signing_request":null}', '{"signing_request":{"status":3}}'],
    ['/v1/governance/models', '{"models":null}', '{"models":[{"id":"m"}]}'],
    ['/v1/governance/models-legacy', '{"model":null}', '{"model":[]}'],
    ['/v1/epochs/current/participants', '{"active_participants":{"participants":[{"index":"a"}]}}', '{"active_participants":{"participants":[]}}'],
    ['/v1/epochs/current/participants', '{"active_participants":{"participants":{}}}', '{"active_participants":{"participants":[]}}'],
    ['/v1/bridge/addresses?chain=x', '{"addresses":[]}', '{"addresses":[]}'],
    ['/v1/versions', '{"api_version":{"build_time":""}}', '{"api_version":{"build_time":7}}']
  ]
  for (const [path, a, b] of cases) {
    const candidate = j(b)
    t.same(reconcile(path, j(a), candidate), [], `${path}: ${a} vs ${b}`)
    t.same(canonicalLines(candidate), lines(b), 'unchanged')
  }
  const longer = j('{"active_participants":{"participants":[{"index":"a"},{"index":"b"}]}}')
  t.same(reconcile('/v1/epochs/1/participants', longer, j('{"active_participants":{"participants":[{"index":"a","models":[]}]}}')),
    ['active_participants.participants[].models'], 'lists of different lengths: the common elements')
})

t.test('answers that are not JSON are compared as text, with no known differences looked for', async (t) => {
  const text = async (body: string): Promise<string> => {
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(body))
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    t.teardown(() => { server.closeAllConnections(); server.close() })
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }
  const report = await compareServers(await text('ok'), await text('ok'), { retries: 0 })
  t.equal(report.mismatches, 0)
  t.ok(report.results.every((r) => r.known.length === 0 && /^200(?: \(key paths\))?$/.test(r.summary)))
})

t.test('docs/clients.md lists every known difference, and the enum names are the chain\'s', async (t) => {
  const doc = readFileSync(new URL('../../../docs/clients.md', import.meta.url), 'utf8')
  for (const difference of KNOWN_DIFFERENCES) t.match(doc, `\`${fieldName(difference)}\``, fieldName(difference))
  t.equal(DKG_PHASES[3], 'DKG_PHASE_COMPLETED')
  t.equal(SIGNING_STATUSES[3], 'THRESHOLD_SIGNING_STATUS_COMPLETED')
})

t.test('npm run compat against a server with the newest Go\'s shapes: known differences, exit 0', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  // Chain state in which every difference shows: DKG data for the latest epoch (the one compat
  // asks for), no governance models, no bridge contracts; participant 3 has no models.
  sim.override(`/productscience/inference/bls/epoch_data/${CURRENT_EPOCH}`, { epoch_data: { ...(EPOCHS[7] as { epoch_data: object }).epoch_data, epoch_id: String(CURRENT_EPOCH) } })
  sim.override('/productscience/inference/inference/models_all', { model: [] })
  sim.override('/productscience/inference/inference/bridge_addresses/ethereum', { addresses: [] })
  const { app } = await buildTestApp(t, { sim })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const edge = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

  /** edge-api's answers rewritten as the newest Go writes them; `extra` plants one more change. */
  async function newestGo (extra: (path: string, body: string) => string = (_, body) => body): Promise<string> {
    const proxy = createServer((req, res) => {
      const path = req.url ?? '/'
      fetch(edge + path).then(async (upstream) => {
        let body = (await upstream.text())
          .replace(/"dkg_phase":(\d+)/g, (_, n: string) => `"dkg_phase":"${DKG_PHASES[Number(n)] as string}"`)
          .replace(/"models":\[\],|"ml_nodes":\[\],|"participants":\[\],/g, '')
          .replace(/^\{"models":\[\]\}$/, '{"models":null}')
          .replace('"addresses":[]', '"addresses":null')
          .replace(/,"build_time":"[^"]*"/, '')
        if (path.startsWith('/v1/bls/signatures/')) body = body.replace(/"status":(\d+)/, (_, n: string) => `"status":"${SIGNING_STATUSES[Number(n)] as string}"`)
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/plain' }).end(extra(path, body))
      }, () => res.writeHead(502).end())
    })
    proxy.listen(0, '127.0.0.1')
    await once(proxy, 'listening')
    t.teardown(() => { proxy.closeAllConnections(); proxy.close() })
    return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
  }

  const go = await newestGo()
  const options = { requestId: COMPLETED_REQUEST_ID, retries: 0, timeoutMs: 5000 }
  for (const [first, second] of [[go, edge], [edge, go]] as const) {
    const report = await compareServers(first, second, options)
    t.equal(report.mismatches, 0, 'nothing but the known differences')
    const known = Object.fromEntries(report.results.filter((r) => r.known.length > 0).map((r) => [r.path, r.known]))
    const participants = ['active_participants.participants[].models', 'active_participants.participants[].ml_nodes']
    t.same(known, {
      [`/v1/bls/epoch/${CURRENT_EPOCH}`]: ['epoch_data.dkg_phase'],
      [`/v1/bls/epochs/${CURRENT_EPOCH}`]: ['epoch_data.dkg_phase'],
      [`/v1/bls/signatures/${COMPLETED_REQUEST_ID}`]: ['signing_request.status'],
      '/v1/epochs/current/participants': participants,
      [`/v1/epochs/${CURRENT_EPOCH}/participants`]: participants,
      '/v1/governance/models': ['models'],
      '/v1/bridge/addresses?chain=ethereum': ['addresses'],
      '/v1/versions': ['api_version.build_time']
    })
  }

  let out = ''
  const write = (text: string): void => { out += text }
  t.equal(await main(['--request-id', COMPLETED_REQUEST_ID, '--retries', '0', go, edge], write), 0, 'exit 0')
  t.match(out, `ok    /v1/bls/signatures/${COMPLETED_REQUEST_ID}  200 (known differences: signing_request.status)`)
  t.match(out, `ok    /v1/bls/epoch/${CURRENT_EPOCH}  200 (known differences: epoch_data.dkg_phase)`)
  t.match(out, 'compat: known differences, not failures (docs/clients.md): epoch_data.dkg_phase, signing_request.status, ' +
    'active_participants.participants[].models, active_participants.participants[].ml_nodes, models, addresses, api_version.build_time\n')
  t.match(out, /0 different\n$/)

  // The same server with one more difference, of a kind that is not known: that still fails.
  const wrong = await newestGo((path, body) => (path === `/v1/bls/epoch/${CURRENT_EPOCH}` ? body.replace('"DKG_PHASE_COMPLETED"', '"DKG_PHASE_FAILED"') : body))
  out = ''
  t.equal(await main(['--retries', '0', wrong, edge], write), 1, 'exit 1')
  t.match(out, `DIFF  /v1/bls/epoch/${CURRENT_EPOCH}  200\n      -     "dkg_phase": "DKG_PHASE_FAILED",\n      +     "dkg_phase": 3,`)
  t.match(out, /1 different\n$/)
})
