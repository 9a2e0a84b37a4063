import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { buildTestApp } from '../fixtures/app.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { main } from '../../scripts/compat/cli.js'
import { compareServers, formatReport } from '../../scripts/compat/run.js'
import { discoverParams, routesFor } from '../../scripts/compat/routes.js'

// Two real edge-api servers over one chain simulator, on loopback; a third "server" is a
// proxy in front of the second that plants differences a deployment could have: a 64-bit
// value written as a string, a route answering 404, and one that never answers.

const COMPAT = fileURLToPath(new URL('../../scripts/compat.ts', import.meta.url))
const PARTICIPANTS_ROUTE = '/v1/epochs/current/participants'

const sim = await startChainSimulator()
t.teardown(() => sim.close())

async function listening (): Promise<string> {
  const { app } = await buildTestApp(t, { sim })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

const reference = await listening()
const candidate = await listening()

/** The planted differences: the participants' epoch_group_id as a string. */
const plantDifference = (path: string, body: string): string =>
  path === PARTICIPANTS_ROUTE ? body.replace('"epoch_group_id":42,', '"epoch_group_id":"42",') : body

/** A proxy to `target` that alters answers on the way (`alter`), and fails two routes. */
async function plantedProxy (target: string, alter = plantDifference): Promise<string> {
  const proxy = createServer((req, res) => {
    const path = req.url ?? '/'
    if (path === '/v1/restrictions/status') {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<html>Not Found</html>')
      return
    }
    if (path === '/v1/governance/models-legacy') {
      req.socket.destroy()
      return
    }
    fetch(target + path).then(async (upstream) => {
      const body = alter(path, await upstream.text())
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/plain' }).end(body)
    }, () => res.writeHead(502).end())
  })
  proxy.listen(0, '127.0.0.1')
  await once(proxy, 'listening')
  t.teardown(() => { proxy.closeAllConnections(); proxy.close() })
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
}

const planted = await plantedProxy(candidate)
const FAST = { retries: 1, retryDelayMs: 0, timeoutMs: 5000 }

t.test('parameters come from the reference server\'s chain state, as in Go\'s compatibility test', async (t) => {
  const get = async (path: string): Promise<{ status: number, body: string }> => {
    const res = await fetch(reference + path)
    return { status: res.status, body: await res.text() }
  }
  const params = await discoverParams(get)
  t.same(params, { blsEpoch: '42', epoch: '42', height: '1843185', pocEpoch: '1842000', address: params.address })
  t.match(params.address, /^gonka1/)
  t.same(await discoverParams(async () => ({ status: 503, body: '' })), { blsEpoch: '1', epoch: '1', height: '0', pocEpoch: '0', address: '' },
    'the Go fallbacks when the chain state cannot be read')
  t.same(await discoverParams(async () => { throw new Error('refused') }), { blsEpoch: '1', epoch: '1', height: '0', pocEpoch: '0', address: '' })
  const sparse = await discoverParams(async (path) => ({ status: 200, body: path === '/v1/participants' ? '{"participants":[{"id":""},{"id":"gonka1b"}]}' : '{"latest_epoch":{"index":0}}' }))
  t.equal(sparse.address, 'gonka1b', 'the first participant with an id')
  t.equal(sparse.blsEpoch, '1', 'epoch 0 falls back to 1')

  const paths = routesFor(params).map((r) => r.path)
  t.equal(paths.length, 20, 'the 17 public routes\' templates (two participants answers), versions, debug/verify and the two light routes')
  t.ok(paths.includes('/v1/bls/epoch/42') && paths.includes('/v1/poc-batches/1842000') && paths.includes('/v1/debug/verify/1843185') && paths.includes('/v1/light/signed-header/1843185'))
  const extra = routesFor(params, { requestId: 'ab', exemptionId: 'e 1', exemptionAccount: 'gonka1x', pubkey: '02ff' }).map((r) => r.path)
  t.same(extra.slice(20), ['/v1/debug/pubkey-to-addr/02ff', '/v1/bls/signatures/ab', '/v1/restrictions/exemptions/e%201/usage/gonka1x'])
  t.equal(routesFor(params, { exemptionId: 'e1' }).length, 20, 'an exemption id alone is not enough')
})

t.test('two servers over the same chain: every route equal', async (t) => {
  const report = await compareServers(reference, candidate, FAST)
  t.equal(report.mismatches, 0, formatReport(report, reference, candidate))
  t.ok(report.results.find((r) => r.path === '/v1/versions')?.summary.includes('key paths'), 'versions: its own version and clock differ, so only its shape is compared')
  t.ok(report.results.some((r) => /^4\d\d \(both\)$/.test(r.summary)), 'routes both refuse are compatible')
})

t.test('planted differences: a diff per route, the rest equal', async (t) => {
  const report = await compareServers(reference, planted, FAST)
  t.equal(report.mismatches, 3)
  const byPath = new Map(report.results.map((r) => [r.path, r]))
  const participants = byPath.get(PARTICIPANTS_ROUTE)
  t.equal(participants?.ok, false)
  t.same(participants?.diff, ['-     "epoch_group_id": 42,', '+     "epoch_group_id": "42",'], 'only the changed line')
  const restrictions = byPath.get('/v1/restrictions/status')
  t.match(restrictions?.summary, 'status 200 vs 404')
  t.equal(restrictions?.diff.at(-1), '+ <html>Not Found</html>', 'a body that is not JSON is compared as text')
  t.match(byPath.get('/v1/governance/models-legacy')?.summary, /^request failed: first ok, second /)
  t.equal(byPath.get('/v1/status')?.ok, true)
  const text = formatReport(report, reference, planted, 1)
  t.match(text, `DIFF  ${PARTICIPANTS_ROUTE}  200\n      -     "epoch_group_id": 42,\n      … 1 more lines`)
  t.match(text, /compat: 20 routes, 17 equal, 3 different\n$/)
})

t.test('a difference that goes away on a retry (the chain moved) is not reported', async (t) => {
  let statusCalls = 0
  const flaky = createServer((req, res) => {
    if (req.url === '/v1/status') statusCalls++
    if (req.url === '/v1/pricing') return // never answers
    fetch(candidate + (req.url ?? '/')).then(async (upstream) => {
      const body = await upstream.text()
      res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(req.url === '/v1/status' && statusCalls === 1 ? '{"status":"moving"}' : body)
    }, () => res.writeHead(502).end())
  })
  flaky.listen(0, '127.0.0.1')
  await once(flaky, 'listening')
  t.teardown(() => { flaky.closeAllConnections(); flaky.close() })
  // The default pause before a retry (1 s), and a short timeout for the route that hangs.
  const report = await compareServers(reference, `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/`, { retries: 1, timeoutMs: 500, skip: ['/v1/versions'] })
  t.equal(report.results.find((r) => r.path === '/v1/status')?.ok, true)
  t.equal(statusCalls, 2, 'fetched again once')
  t.notOk(report.results.some((r) => r.path === '/v1/versions'), 'skipped')
  t.match(report.results.find((r) => r.path === '/v1/pricing')?.summary, /^request failed: first ok, second .*(timeout|aborted)/i, 'a server that does not answer in time')
})

t.test('the command line: usage errors, help, exit 0 when equal, 1 on a difference', async (t) => {
  let out = ''
  const write = (text: string): void => { out += text }
  t.equal(await main(['--help'], write), 0)
  t.match(out, /^usage: npm run compat/)
  for (const args of [[], [reference], [reference, 'ftp://x'], [reference, 'not a url'], [reference, candidate, 'third'], ['--retries', 'many', reference, candidate], ['--bogus', reference, candidate]]) {
    out = ''
    t.equal(await main(args, write), 2, args.join(' '))
    t.match(out, /usage:/)
  }
  out = ''
  t.equal(await main(['--retries', '0', '--timeout-ms', '5000', '--retry-delay-ms', '0', reference, candidate], write), 0)
  t.match(out, /0 different\n$/)
  out = ''
  t.equal(await main(['--retries', '0', '--skip', '/v1/restrictions/status', '--skip', '/v1/governance/models-legacy', reference, planted], write), 1)
  t.match(out, /DIFF {2}\/v1\/epochs\/current\/participants/)
  t.match(out, /1 different\n$/)
  out = ''
  t.equal(await main(['--request-id', 'deadbeef', '--exemption-id', 'emergency-infrastructure-001', '--exemption-account', 'gonka1x', '--pubkey', '02', reference, candidate], write), 0)
  t.match(out, '/v1/bls/signatures/deadbeef')
})

t.test('a model\'s `created` is the request\'s time on either server: a second apart is no difference, a minute is', async (t) => {
  const shifted = (seconds: number) => (path: string, body: string): string =>
    path === '/v1/models' ? body.replaceAll(/"created":(\d+)/g, (_, n: string) => `"created":${Number(n) + seconds}`) : body
  const compare = async (seconds: number): Promise<{ ok: boolean | undefined, summary: string | undefined }> => {
    const report = await compareServers(reference, await plantedProxy(candidate, shifted(seconds)), FAST)
    const models = report.results.find((r) => r.path === '/v1/models')
    return { ok: models?.ok, summary: models?.summary }
  }
  t.same(await compare(1), { ok: true, summary: '200' }, 'the two requests straddled a second: equal, and not a known difference')
  t.same(await compare(-1), { ok: true, summary: '200' }, 'either way')
  t.equal((await compare(60)).ok, false, 'a minute apart is a difference')
})

t.test('npm run compat\'s script exits non-zero on a planted difference and prints the diff', async (t) => {
  const child = spawn(process.execPath, [...process.execArgv, COMPAT, '--retries', '0', reference, planted], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env }
  })
  let stdout = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  const [code] = await once(child, 'exit') as [number]
  t.equal(code, 1)
  t.match(stdout, '+     "epoch_group_id": "42",')
})
