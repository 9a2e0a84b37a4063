import { createServer } from 'node:http'
import t from 'tap'
import { request } from 'undici'
import { ROUTE_CLASSES } from '../../src/cache/route-classes.js'
import { Router } from '../../harness/haproxy.js'
import { directives, renderRouterConfig } from '../../harness/router-config.js'
import { freePorts } from '../../harness/ports.js'
import { until } from '../../harness/wait.js'
import { requireTool } from '../fixtures/deploy/tools.js'

// The router's waiting lane (compose/router/haproxy.cfg.template, docs/waiting.md "The router"):
// it takes only what a replica holds (src/waiting/long-poll.ts waitAsked, on a latest-state route;
// GET /v1/events), with bounded slots and queue; anything else goes to the pool. Review D3: the
// old rule (any afterHeight=, any Prefer carrying wait=) let `?afterHeight=0` around every limit.

const LOOPBACK = {
  EDGE_API_ROUTER_SERVERS: '127.0.0.1:40001 127.0.0.1:40002',
  EDGE_API_ROUTER_ADDRESS: '127.0.0.1',
  EDGE_API_ROUTER_PORT: '40010',
  EDGE_API_ROUTER_METRICS_ADDRESS: '127.0.0.1:40011',
  EDGE_API_ROUTER_INIT_STATE: 'off'
}

function section (config: string, header: string): string[] {
  const lines = directives(config)
  const start = lines.indexOf(header)
  const end = lines.findIndex((l, i) => i > start && /^(backend|frontend|resolvers|global|defaults)\b/.test(l))
  return lines.slice(start + 1, end < 0 ? undefined : end)
}

t.test('the waiting lane has slots sized for held requests and a bounded queue, answered as a replica over its waiting cap', async (t) => {
  for (const env of [{ EDGE_API_ROUTER_INIT_STATE: 'on' }, LOOPBACK]) {
    const waiting = section(renderRouterConfig(env), 'backend edge_api_waiting')
    t.ok(waiting.includes('default-server maxconn 1024'), 'maxconn 1024 a replica by default')
    const deny = waiting.findIndex((l) => l.startsWith('http-request deny deny_status 429') && l.includes('Retry-After 5') && l.endsWith('if { queue(edge_api_waiting) ge 32 }'))
    t.ok(deny >= 0, 'the queue bounded by EDGE_API_ROUTER_QUEUE_LENGTH, 429 Retry-After 5 past it')
    const stream = waiting.indexOf('http-request return status 200 content-type text/event-stream hdr Cache-Control no-cache string "retry: 5000\\n\\n" if { path /v1/events } { queue(edge_api_waiting) ge 32 }')
    t.ok(stream >= 0 && stream < deny, 'a stream past it: 200 text/event-stream with retry: first, so an EventSource comes back')
    t.notOk(waiting.some((l) => l.includes('shutdown-sessions')), 'no shutdown-sessions: a draining replica ends its held requests itself')
    t.ok(waiting.includes('balance leastconn'))
  }
  const set = section(renderRouterConfig({ ...LOOPBACK, EDGE_API_ROUTER_WAITING_MAXCONN: '7', EDGE_API_ROUTER_QUEUE_LENGTH: '0' }), 'backend edge_api_waiting')
  t.ok(set.includes('default-server maxconn 7'), 'EDGE_API_ROUTER_WAITING_MAXCONN sets it')
  t.notOk(set.some((l) => l.includes('queue(edge_api_waiting)')), 'length 0: timeout queue alone bounds that queue')
  for (const bad of ['0', '-1', '12x', '']) {
    const config = (): string => renderRouterConfig({ ...LOOPBACK, EDGE_API_ROUTER_WAITING_MAXCONN: bad })
    if (bad === '') t.doesNotThrow(config, 'empty: the default')
    else t.throws(config, new RegExp(`EDGE_API_ROUTER_WAITING_MAXCONN='${bad.replace('-', '\\-')}'`), `${bad} refused, naming the variable`)
  }
})

t.test('a stream refused by a per-client limit is tarpitted as a 200 text/event-stream with retry:, before the 429 of the same limit', async (t) => {
  const frontend = section(renderRouterConfig({ ...LOOPBACK, EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS: '100', EDGE_API_ROUTER_CLIENT_MAX_REQUESTS: '2000' }), 'frontend edge_api_in')
  const stream = 'http-request tarpit deny_status 200 content-type text/event-stream hdr Cache-Control no-cache string "retry: 10000\\n\\n" if { path /v1/events }'
  for (const limit of ['{ var(sess.excess_connection) -m found }', '{ sc_http_req_rate(0) gt 2000 }']) {
    const refusal = frontend.findIndex((l) => l.startsWith('http-request tarpit deny_status 429') && l.endsWith(`if ${limit}`))
    t.ok(refusal >= 0, `the 429 of ${limit}`)
    t.equal(frontend.indexOf(`${stream} ${limit}`), refusal - 1, 'a stream\'s 200 with retry: 10000 (its Retry-After) just before it')
  }
})

/** A sample path of a route pattern: each :param filled in. */
const samplePath = (pattern: string): string => pattern.replace(/:(\w+)/g, (_, name: string) => name === 'epoch' ? 'latest' : `5${name.length}`)

// Every route's sample with afterHeight=5: held (the waiting lane) exactly on the latest-state routes.
const BY_ROUTE_CLASS = Object.entries(ROUTE_CLASSES).map(([route, entry]) => {
  const [method, pattern] = route.split(' ') as [string, string]
  return { method, path: `${samplePath(pattern)}?afterHeight=5`, lane: entry.class === 'latest' ? 'edge_api_waiting' : 'edge_api_pool' }
})

interface Case { readonly method?: string, readonly path: string, readonly headers?: Record<string, string>, readonly lane: string }
const TAG = { 'if-none-match': '"h5-abc"' }
const CASES: Case[] = [
  ...BY_ROUTE_CLASS,
  { path: '/v1/events', lane: 'edge_api_waiting' },
  { path: '/v1/events?since=5', lane: 'edge_api_waiting' },
  { method: 'HEAD', path: '/v1/epochs/latest?afterHeight=5', lane: 'edge_api_waiting' },
  { path: '/v1/participants?afterHeight=007&wait=30', lane: 'edge_api_waiting' },
  { path: '/v1/epochs/latest', headers: { ...TAG, prefer: 'wait=25' }, lane: 'edge_api_waiting' },
  { path: '/v1/epochs/latest', headers: { ...TAG, prefer: 'respond-async, WAIT = "10"' }, lane: 'edge_api_waiting' },
  { path: '/v1/epochs/latest?wait=5', headers: TAG, lane: 'edge_api_waiting' },
  // Answered at once by any replica: ordinary reads, whatever they carry.
  { path: '/v1/participants?afterHeight=0', lane: 'edge_api_pool' },
  { path: '/v1/participants?afterHeight=000', lane: 'edge_api_pool' },
  { path: '/v1/participants?afterHeight=5&wait=0', lane: 'edge_api_pool' },
  { path: '/v1/participants?afterHeight=5', headers: { prefer: 'wait=0' }, lane: 'edge_api_pool' },
  { path: '/v1/participants?afterheight=5', lane: 'edge_api_pool' },
  { path: '/v1/participants?afterHeight=abc', lane: 'edge_api_pool' },
  { path: '/v1/participants/a/b?afterHeight=5', lane: 'edge_api_pool' },
  { path: '/v1/status', headers: { ...TAG, prefer: 'wait=5' }, lane: 'edge_api_pool' },
  { path: '/v1/epochs/latest', headers: { prefer: 'wait=25' }, lane: 'edge_api_pool' },
  { path: '/v1/epochs/latest', headers: { ...TAG, prefer: 'wait=0' }, lane: 'edge_api_pool' },
  { path: '/v1/epochs/latest', headers: { ...TAG, prefer: 'handling=lenient; nowait=5' }, lane: 'edge_api_pool' },
  { path: '/v1/epochs/latest?wait=0', headers: { ...TAG, prefer: 'wait=5' }, lane: 'edge_api_pool' },
  { method: 'POST', path: '/v1/participants?afterHeight=5', lane: 'edge_api_pool' },
  { path: '/v1/eventsx', lane: 'edge_api_pool' },
  { path: '/v1/events/x', lane: 'edge_api_pool' }
]

t.test('through a real HAProxy, each request goes to the lane a replica would treat it by: the waiting lane only for what it holds', async (t) => {
  if (!requireTool(t, 'haproxy', 'the waiting lane\'s routing with the real binary')) return
  // A stand-in replica answering everything at once: which backend took a request is the router's decision alone.
  const replica = createServer((req, res) => { req.resume(); res.end('{}') })
  await new Promise<void>((resolve) => replica.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { replica.closeAllConnections(); replica.close() })
  const [port, metricsPort] = await freePorts(2) as [number, number]
  const router = new Router([`127.0.0.1:${(replica.address() as { port: number }).port}`], port, metricsPort, { EDGE_API_ROUTER_INIT_STATE: 'off', EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' })
  t.teardown(() => router.stop())
  await router.allUp(1)
  t.ok(CASES.filter((c) => c.lane === 'edge_api_waiting').length >= 16 && CASES.some((c) => c.lane === 'edge_api_pool'), 'both lanes exercised')
  for (const [i, c] of CASES.entries()) {
    const method = c.method ?? 'GET'
    const res = await request(`${router.url}${c.path}`, { method, headers: c.headers ?? {}, reset: true })
    await res.body.dump()
    await until(() => router.accessLogLines > i, `the access line of ${method} ${c.path}`, { timeoutMs: 5000 })
    const line = router.accessLog[i] as string
    t.equal(/ edge_api_in (\w+)\//.exec(line)?.[1], c.lane, `${method} ${c.path} ${JSON.stringify(c.headers ?? {})}: ${c.lane}`)
    t.equal(res.statusCode, 200, 'answered by the replica')
  }
})
