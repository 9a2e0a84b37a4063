import { createServer, request as httpRequest } from 'node:http'
import t from 'tap'
import { CACHE_OFF } from '../../../harness/cache-off.js'
import { startChainSimulator } from '../../../harness/chain-simulator/simulator.js'
import { LogLines } from '../../../harness/log-lines.js'
import { loadConfig } from '../../../src/config.js'
import { createLogger } from '../../../src/logger.js'
import { startService } from '../../../src/service.js'
import { pageResult, runInBrowser } from '../../fixtures/browser.js'
import { requireTool } from '../../fixtures/deploy/tools.js'
import { openSse } from '../../fixtures/sse-client.js'

// A browser's EventSource refused by the waiting cap comes back (headless chromium). At
// 1365d2e the refusal was a 429: the EventSource fired one error and stopped for good
// (readyState CLOSED). The page and its stream share one origin (a small front that passes
// /v1/events through to the replica), which counts the page's connections.

const PAGE = `<!doctype html><html><body><pre id="result">pending</pre><script>
const log = []
const source = new EventSource('/v1/events')
const done = () => { source.close(); document.getElementById('result').textContent = JSON.stringify(log) }
source.onopen = () => { log.push('open') }
source.onerror = () => { log.push('error:' + source.readyState); if (source.readyState === EventSource.CLOSED) done() }
source.addEventListener('head', () => { log.push('head'); done() })
</script></body></html>`

t.test('an EventSource refused by the waiting cap reconnects after the retry: and then follows the heads', async (t) => {
  if (!requireTool(t, 'chromium', 'an EventSource refused by the cap')) return
  const sim = await startChainSimulator()
  const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_METRICS_PORT: 'off', EDGE_API_LOG_LEVEL: 'warn', EDGE_API_WAITING_PER_CLIENT: '1', ...CACHE_OFF })
  const service = await startService({ config, logger: createLogger(config.logLevel, new LogLines().stream), loadShedding: { maxEventLoopUtilization: 0, maxEventLoopDelay: 0 } })
  t.teardown(async () => { service.app.server.closeAllConnections(); await service.close(); await sim.close() })
  // The client's one place, taken: the page's first connection is refused by the cap.
  const holder = await openSse(`http://127.0.0.1:${service.port}/v1/events`)
  t.equal(holder.status, 200)
  const statuses: number[] = []
  const front = createServer((req, res) => {
    if (req.url !== '/v1/events') { res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE); return }
    // The page came back: its place is given up for it.
    if (statuses.length > 0) holder.close()
    const upstream = httpRequest(`http://127.0.0.1:${service.port}/v1/events`, { headers: { accept: 'text/event-stream' } }, (up) => {
      statuses.push(up.statusCode as number)
      res.writeHead(up.statusCode as number, { 'content-type': up.headers['content-type'] as string, 'cache-control': 'no-cache' })
      up.pipe(res)
    })
    upstream.on('error', () => res.destroy())
    req.on('close', () => upstream.destroy())
    upstream.end()
  }).listen(0, '127.0.0.1')
  await new Promise((resolve) => front.once('listening', resolve))
  t.teardown(() => { front.closeAllConnections(); front.close() })
  const dom = await runInBrowser(`http://127.0.0.1:${(front.address() as { port: number }).port}/`, { virtualTimeMs: 60_000, timeoutMs: 60_000 })
  const log = JSON.parse(pageResult(dom) ?? '"no result"') as unknown
  t.same(statuses[0], 200, 'the refusal is a 200 event stream')
  t.ok(statuses.length >= 2, `the page connected again (${statuses.length} connections)`)
  t.match(log, ['open', 'error:0'], 'refused: the stream opened, ended, and the EventSource was CONNECTING again, not CLOSED')
  t.equal((log as string[]).at(-1), 'head', `then it followed the heads (${JSON.stringify(log)})`)
})
