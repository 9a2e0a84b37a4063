import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { WebSocket } from 'undici'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { startService, type Service } from '../../src/service.js'
import { CACHE_OFF } from '../../harness/cache-off.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { requireTool } from '../fixtures/deploy/tools.js'
import { LogLines } from '../../harness/log-lines.js'
import { until } from '../../harness/wait.js'
import { within } from '../../harness/deadline.js'

// A real browser's EventSource (Debian's chromium, headless, driven over the DevTools
// protocol) follows /v1/events through a replica's drain: the stream ends, the browser
// reconnects by itself with Last-Event-ID, another replica replays from it, and the page has
// every height once, in order.

const PAGE = `<!doctype html><title>events</title><script>
window.seen = []; window.opened = 0
const source = new EventSource('/v1/events')
source.onopen = () => { window.opened++ }
source.addEventListener('head', (e) => { window.seen.push(Number(e.lastEventId)) })
</script>`

t.setTimeout(120_000)

async function replica (chainUrl: string): Promise<Service> {
  const config = loadConfig({ CHAIN_REST_URL: chainUrl, EDGE_API_LOG_LEVEL: 'warn', EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', ...CACHE_OFF })
  return await startService({ config, logger: createLogger(config.logLevel, new LogLines().stream), drainWindows: { announceMs: 100, budgetMs: 20_000 }, metricsPort: 0 })
}

t.test('a browser\'s EventSource resumes across a replica\'s drain from Last-Event-ID, with no gap', async (t) => {
  if (!requireTool(t, 'chromium', 'the headless browser\'s EventSource test')) return
  const sim = await startChainSimulator()
  sim.clock.every(300)
  const replicas = [await replica(sim.url), await replica(sim.url)]
  let current = 0
  const asked: Array<string | undefined> = []
  // The page and its stream from one origin: the stream passed through to the current replica.
  const front = createServer((req, res) => {
    if (req.url !== '/v1/events') { res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE); return }
    asked.push(req.headers['last-event-id'] as string | undefined)
    const upstream = httpRequest(`http://127.0.0.1:${(replicas[current] as Service).port}/v1/events`, { headers: { 'last-event-id': req.headers['last-event-id'] ?? '' } as IncomingHttpHeaders }, (up) => {
      res.writeHead(up.statusCode as number, { 'content-type': up.headers['content-type'] as string, 'cache-control': 'no-cache' })
      up.pipe(res)
    })
    upstream.on('error', () => res.destroy())
    req.on('close', () => upstream.destroy())
    upstream.end()
  }).listen(0, '127.0.0.1')
  await within(new Promise((resolve) => front.once('listening', resolve)), 'the front listening')
  const origin = `http://127.0.0.1:${(front.address() as { port: number }).port}`
  const profile = mkdtempSync(join(tmpdir(), 'edge-chromium-'))
  const browser = spawn('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', `--user-data-dir=${profile}`, '--remote-debugging-port=0', `${origin}/`], { stdio: ['ignore', 'ignore', 'pipe'] })
  const exited = once(browser, 'exit')
  t.teardown(async () => {
    browser.kill('SIGKILL')
    await exited
    sim.clock.stop()
    front.closeAllConnections()
    front.close()
    for (const r of replicas) { r.app.server.closeAllConnections(); await r.close() }
    await sim.close()
    rmSync(profile, { recursive: true, force: true, maxRetries: 5 })
  })
  let stderr = ''
  browser.stderr?.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  await until(() => /DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)\//.test(stderr), 'chromium\'s DevTools', { timeoutMs: 30_000, intervalMs: 50 })
  const port = (/DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr) as RegExpExecArray)[1]
  let page: { webSocketDebuggerUrl: string, url: string } | undefined
  await until(async () => {
    const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as Array<{ type: string, webSocketDebuggerUrl: string, url: string }>
    page = targets.find((target) => target.type === 'page' && target.url.startsWith(origin))
    return page !== undefined
  }, 'the page', { timeoutMs: 30_000, intervalMs: 100 })
  const socket = new WebSocket((page as { webSocketDebuggerUrl: string }).webSocketDebuggerUrl)
  await within(new Promise((resolve, reject) => { socket.onopen = resolve; socket.onerror = reject }), 'the DevTools socket open')
  let next = 1
  const evaluate = async (expression: string): Promise<unknown> => await within(new Promise((resolve) => {
    const id = next++
    socket.addEventListener('message', function answer (message) {
      const reply = JSON.parse(String(message.data)) as { id: number, result: { result: { value: unknown } } }
      if (reply.id !== id) return
      socket.removeEventListener('message', answer)
      resolve(reply.result.result.value)
    })
    socket.send(JSON.stringify({ id, method: 'Runtime.evaluate', params: { expression, returnByValue: true } }))
  }), `chromium evaluating ${expression}`)
  t.teardown(() => socket.close())
  const seen = async (): Promise<number[]> => await evaluate('window.seen ?? []') as number[]

  await until(async () => (await seen()).length >= 3, 'the browser to see three heads', { timeoutMs: 30_000, intervalMs: 100 })
  current = 1
  replicas[0]?.drain.signal('SIGTERM')
  const outcome = await replicas[0]?.drain.outcome
  t.equal(outcome?.code, 0, 'the first replica drained cleanly')
  const drainedAt = (await seen()).at(-1) as number
  await until(async () => ((await seen()).at(-1) ?? 0) >= drainedAt + 5, 'the browser to follow on the second replica', { timeoutMs: 30_000, intervalMs: 100 })
  const heights = await seen()
  t.equal(await evaluate('window.opened'), 2, 'the browser reconnected once, by itself')
  t.equal(asked.length, 2)
  t.equal(asked[0], undefined, 'the first connect had no cursor')
  t.match(asked[1], /^\d+$/, `the reconnect sent Last-Event-ID ${asked[1]}`)
  t.same(heights, Array.from({ length: heights.length }, (_, i) => (heights[0] as number) + i), `every height once, in order, across the drain (${heights[0]}–${heights.at(-1)})`)
})
