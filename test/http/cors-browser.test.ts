import { createServer } from 'node:http'
import t, { type Test } from 'tap'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { startService } from '../../src/service.js'
import { pageResult, runInBrowser } from '../fixtures/browser.js'
import { CACHE_OFF } from '../../harness/cache-off.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { requireTool } from '../fixtures/deploy/tools.js'
import { LogLines } from '../../harness/log-lines.js'

// CORS as a browser enforces it: a page served from one origin (a small static server)
// fetches a /v1 answer from the app on another port, and reads its body and the headers
// EDGE_API_CORS_ORIGINS exposes. Its X-Request-Id header makes the browser send a preflight
// first. With CORS off the browser hides the answer from the page.

const PAGE = (api: string): string => `<!doctype html><html><body><pre id="result">pending</pre><script>
fetch(${JSON.stringify(`${api}/v1/epochs/latest`)}, { headers: { 'x-request-id': 'from-the-page' } })
  .then(async (res) => ({ status: res.status, height: res.headers.get('x-block-height'), etag: res.headers.get('etag'), rateLimit: res.headers.get('ratelimit'), policy: res.headers.get('ratelimit-policy'), latestEpoch: typeof (await res.json()).latest_epoch }))
  .catch((err) => ({ error: String(err) }))
  .then((result) => { document.getElementById('result').textContent = JSON.stringify(result) })
</script></body></html>`

// Refusals a page must be able to read: every fetch() with If-None-Match, Prefer or
// X-Min-Block-Height makes the browser ask a preflight first; refused, the page sees only
// "TypeError: Failed to fetch". A blocked route, then a client over its limit (two simple reads
// use its 2 requests; simple requests need no preflight), each asked with each header.
const REFUSALS_PAGE = (api: string): string => `<!doctype html><html><body><pre id="result">pending</pre><script>
const HEADERS = [{ 'if-none-match': '"x"' }, { prefer: 'wait=1' }, { 'x-min-block-height': '1' }]
const read = (path, headers) => fetch(${JSON.stringify(api)} + path, { headers })
  .then((res) => ({ status: res.status, retryAfter: res.headers.get('retry-after'), rateLimit: res.headers.get('ratelimit'), policy: res.headers.get('ratelimit-policy') }))
  .catch((err) => ({ error: String(err) }))
;(async () => {
  const blocked = []
  for (const headers of HEADERS) blocked.push(await read('/v1/participants', headers))
  const spent = [(await read('/v1/status', {})).status, (await read('/v1/versions', {})).status]
  const limited = []
  for (const headers of HEADERS) limited.push(await read('/v1/epochs/latest', headers))
  return { blocked, spent, limited }
})().then((result) => { document.getElementById('result').textContent = JSON.stringify(result) })
</script></body></html>`

// A long-poll asked with Prefer: wait (above a height the chain has passed: answered at once) and
// the header that says the wait was applied, which a page reads only when it is exposed.
const PREFER_PAGE = (api: string): string => `<!doctype html><html><body><pre id="result">pending</pre><script>
fetch(${JSON.stringify(`${api}/v1/epochs/latest?afterHeight=1`)}, { headers: { prefer: 'wait=1' } })
  .then((res) => ({ status: res.status, applied: res.headers.get('preference-applied') }))
  .catch((err) => ({ error: String(err) }))
  .then((result) => { document.getElementById('result').textContent = JSON.stringify(result) })
</script></body></html>`

async function app (t: Test, cors: string, env: Record<string, string> = {}): Promise<string> {
  const sim = await startChainSimulator()
  const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_METRICS_PORT: 'off', EDGE_API_LOG_LEVEL: 'warn', EDGE_API_RATE_LIMIT: '600/1m', EDGE_API_CORS_ORIGINS: cors, ...CACHE_OFF, ...env })
  const service = await startService({ config, logger: createLogger(config.logLevel, new LogLines().stream), loadShedding: { maxEventLoopUtilization: 0, maxEventLoopDelay: 0 } })
  t.teardown(async () => { await service.close(); await sim.close() })
  return `http://127.0.0.1:${service.port}`
}

/** A static server for the page, on another port: another origin. */
async function pageOrigin (t: Test, api: string, page = PAGE): Promise<string> {
  const server = createServer((_req, res) => { res.setHeader('content-type', 'text/html'); res.end(page(api)) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`
}

async function fromBrowser (t: Test, cors: string): Promise<Record<string, unknown>> {
  const api = await app(t, cors)
  const dom = await runInBrowser(`${await pageOrigin(t, api)}/`)
  return JSON.parse(pageResult(dom) ?? '{}') as Record<string, unknown>
}

t.test('a page on another origin reads a /v1 answer and its X-Block-Height, ETag and RateLimit', async (t) => {
  if (!requireTool(t, 'chromium', 'CORS from a real browser')) return
  const result = await fromBrowser(t, '*')
  t.match(result, { status: 200, height: /^\d+$/, etag: /^(W\/)?"/, rateLimit: /^"default";r=\d+;t=\d+$/, policy: '"default";q=600;w=60', latestEpoch: 'object' })
})

t.test('with EDGE_API_CORS_ORIGINS=off the browser keeps the answer from the page', async (t) => {
  if (!requireTool(t, 'chromium', 'CORS from a real browser')) return
  const result = await fromBrowser(t, 'off')
  t.match(result, { error: /TypeError: Failed to fetch/ })
})

t.test('a page reads a blocked route\'s 403 and a limited client\'s 429 with its Retry-After, whatever headers make its fetch preflight', async (t) => {
  if (!requireTool(t, 'chromium', 'CORS from a real browser')) return
  const api = await app(t, '*', { EDGE_API_BLOCKED_ROUTES: 'participants', EDGE_API_RATE_LIMIT: '2/1m' })
  const dom = await runInBrowser(`${await pageOrigin(t, api, REFUSALS_PAGE)}/`)
  const result = JSON.parse(pageResult(dom) ?? '{}') as { blocked: unknown[], spent: number[], limited: unknown[] }
  // Before preflights were let through, each of these six was { error: 'TypeError: Failed to fetch' }.
  t.same(result.blocked, Array(3).fill({ status: 403, retryAfter: null, rateLimit: null, policy: null }), 'the 403 read, with each header')
  t.same(result.spent, [200, 200], 'two simple reads spend the client\'s limit (no preflight, none counted)')
  t.equal(result.limited.length, 3)
  for (const refused of result.limited) {
    t.match(refused, { status: 429, retryAfter: /^\d+$/, rateLimit: /^"default";r=0;t=\d+$/, policy: '"default";q=2;w=60' }, 'the 429 read, with its Retry-After and limit fields')
  }
})

t.test('a page reads Preference-Applied on a long-poll it asked with Prefer: wait', async (t) => {
  if (!requireTool(t, 'chromium', 'CORS from a real browser')) return
  const api = await app(t, '*')
  const dom = await runInBrowser(`${await pageOrigin(t, api, PREFER_PAGE)}/`)
  t.same(JSON.parse(pageResult(dom) ?? '{}'), { status: 200, applied: 'wait=1' }, 'the wait it asked, applied, read by the page (null while not exposed)')
})
