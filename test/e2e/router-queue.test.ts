import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import t, { type Test } from 'tap'
import { requireTool } from '../fixtures/deploy/tools.js'
import { Router } from '../../harness/haproxy.js'
import { freePorts } from '../../harness/ports.js'
import { until } from '../../harness/wait.js'
import { within } from '../../harness/deadline.js'

// The router's queue (compose/router/haproxy.cfg.template: per-server maxconn, timeout queue),
// on a real HAProxy in front of stand-in replicas that hold every request until the test
// lets it go: a replica "held busy" without depending on how fast this machine is.

const MAXCONN = 2
// Generous: on a loaded machine HAProxy and this test share two cores with other suites.
const QUEUE_MS = 2000

t.setTimeout(120_000)

/** A replica that answers /readyz at once (200, or 503 once draining) and holds everything else until released. */
class HeldReplica {
  readonly server: Server
  /** Paths in the order they reached the replica. */
  readonly received: string[] = []
  readonly #held: Array<{ path: string, res: ServerResponse }> = []
  draining = false

  constructor () {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/readyz') {
        res.writeHead(this.draining ? 503 : 200, { 'content-type': 'application/json' }).end('{}')
        return
      }
      this.received.push(req.url as string)
      this.#held.push({ path: req.url as string, res })
    })
  }

  get holding (): number {
    return this.#held.length
  }

  /** Answers the oldest held request 200 with its path. */
  releaseOne (): void {
    const next = this.#held.shift()
    if (next === undefined) throw new Error('nothing held')
    next.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: next.path }))
  }

  releaseAll (): void {
    while (this.#held.length > 0) this.releaseOne()
  }

  async listen (port: number): Promise<void> {
    this.server.listen(port, '127.0.0.1')
    await once(this.server, 'listening')
  }

  async close (): Promise<void> {
    this.releaseAll()
    this.server.closeAllConnections()
    this.server.close()
  }
}

interface Answer { readonly status: number, readonly body: string, readonly ms: number, readonly headers: Headers }

/** One GET; concurrent ones go out on connections of their own. */
async function get (origin: string, path: string): Promise<Answer> {
  const started = performance.now()
  const res = await fetch(`${origin}${path}`)
  return { status: res.status, body: await res.text(), ms: performance.now() - started, headers: res.headers }
}

/** `settings`: more render.sh settings; the queue has no length bound unless they give one. */
async function startRouter (t: Test, replicas: HeldReplica[], settings: Record<string, string> = {}): Promise<Router> {
  const ports = await freePorts(replicas.length + 2)
  await Promise.all(replicas.map(async (r, i) => r.listen(ports[i] as number)))
  const [routerPort, metricsPort] = ports.slice(replicas.length) as [number, number]
  const router = new Router(replicas.map((_r, i) => `127.0.0.1:${ports[i] as number}`), routerPort, metricsPort, {
    EDGE_API_ROUTER_SERVER_MAXCONN: String(MAXCONN),
    EDGE_API_ROUTER_QUEUE_TIMEOUT_MS: String(QUEUE_MS),
    EDGE_API_ROUTER_QUEUE_LENGTH: '0',
    ...settings
  })
  t.teardown(async () => {
    await Promise.all(replicas.map(async (r) => r.close()))
    await router.stop()
  })
  await router.allUp(replicas.length, 20_000)
  return router
}

t.test('a replica held busy: the router gives it maxconn requests, queues the next in order, answers the excess 503 within timeout queue', async (t) => {
  if (!requireTool(t, 'haproxy', 'the router queue test')) return
  const replica = new HeldReplica()
  const router = await startRouter(t, [replica])
  const stat = (await router.stat()).find((row) => row.svname === 'edgeapi1')
  t.equal(stat?.slim, String(MAXCONN), `HAProxy's per-server limit is EDGE_API_ROUTER_SERVER_MAXCONN (${MAXCONN})`)
  t.not(stat?.check_status, '', 'the server is still health-checked (the maxconn line adds to default-server, it does not replace it)')

  // maxconn requests reach the replica; the next ones wait in the router, in arrival order.
  const inFlight = ['/held/1', '/held/2'].map(async (path) => get(router.url, path))
  await until(() => replica.holding === MAXCONN, 'the replica to hold maxconn requests')
  const queued: Array<Promise<Answer>> = []
  for (let i = 1; i <= 3; i++) {
    queued.push(get(router.url, `/queued/${i}`))
    await until(async () => await router.queued() === i, `request ${i} to wait in the router's queue`)
  }
  t.equal(replica.received.length, MAXCONN, 'the replica never saw more than maxconn requests at once')

  // Each answer frees one slot: the oldest queued request takes it.
  for (let i = 1; i <= 3; i++) {
    replica.releaseOne()
    await until(() => replica.received.length === MAXCONN + i, `queued request ${i} to reach the replica`)
  }
  // The two held requests are sent at once, so either may reach the replica first; only the queue has an order.
  t.same([...replica.received.slice(0, MAXCONN)].sort(), ['/held/1', '/held/2'], 'the held requests first')
  t.same(replica.received.slice(MAXCONN), ['/queued/1', '/queued/2', '/queued/3'], 'the queue drained in arrival order')
  replica.releaseAll()
  const answers = await Promise.all([...inFlight, ...queued])
  t.same(answers.map((a) => a.status), [200, 200, 200, 200, 200], 'every queued request was answered by the replica')
  t.same(JSON.parse(answers[2]?.body as string), { path: '/queued/1' })

  // Held full again: what waits longer than timeout queue gets the router's 503, not the replica.
  const busy = ['/busy/1', '/busy/2'].map(async (path) => get(router.url, path))
  await until(() => replica.holding === MAXCONN, 'the replica to be held full again')
  const before = replica.received.length
  const excess = await Promise.all([1, 2, 3, 4, 5].map(async (i) => get(router.url, `/excess/${i}`)))
  t.same(excess.map((a) => a.status), [503, 503, 503, 503, 503], 'the excess is answered 503 by the router')
  const slowest = Math.max(...excess.map((a) => a.ms))
  const fastest = Math.min(...excess.map((a) => a.ms))
  t.ok(fastest >= QUEUE_MS - 50, `after waiting timeout queue (${QUEUE_MS} ms): fastest ${fastest.toFixed(0)} ms`)
  // The bound: timeout queue plus HAProxy's and this test's scheduling on a loaded machine.
  t.ok(slowest <= QUEUE_MS + 1500, `within timeout queue (+ scheduling slack): slowest ${slowest.toFixed(0)} ms`)
  t.equal(replica.received.length, before, 'none of the excess reached the replica')
  // HAProxy writes the access-log line as the stream ends, a moment after the client has its answer.
  await until(() => router.queueTimeouts.length === excess.length, 'the router log to show the queue timeouts')
  t.equal(router.queueTimeouts.length, 5, 'the router log says why: sQ, the timeout struck while the request was queued')
  t.equal(await router.queued(), 0, 'the queue is empty again')
  replica.releaseAll()
  t.same((await Promise.all(busy)).map((a) => a.status), [200, 200], 'the requests the replica held were answered')
})

t.test('a replica that starts draining strands nothing in the queue: the requests waiting go to the replica still up', async (t) => {
  if (!requireTool(t, 'haproxy', 'the router queue drain test')) return
  const draining = new HeldReplica()
  const staying = new HeldReplica()
  const router = await startRouter(t, [draining, staying])
  const inFlight = [1, 2, 3, 4].map(async (i) => get(router.url, `/held/${i}`))
  await until(() => draining.holding === MAXCONN && staying.holding === MAXCONN, 'both replicas held full')
  const queued: Array<Promise<Answer>> = []
  for (let i = 1; i <= 3; i++) {
    queued.push(get(router.url, `/queued/${i}`))
    await until(async () => await router.queued() === i, `request ${i} to wait in the router's queue`)
  }

  // /readyz turns 503 (SIGTERM's drain announcement): the router marks the replica DOWN.
  const since = performance.now()
  draining.draining = true
  await within(router.waitFor('edgeapi1', 'DOWN', since), 'the router marking edgeapi1 DOWN')
  t.equal(await router.queued(), 3, 'the queued requests are still waiting, none answered 503')

  // The replica still up frees its slots one by one: the queue drains onto it alone.
  for (let i = 1; i <= 3; i++) {
    staying.releaseOne()
    await until(() => staying.received.length === MAXCONN + i, `queued request ${i} to reach the replica still up`)
  }
  t.same(staying.received.slice(MAXCONN), ['/queued/1', '/queued/2', '/queued/3'], 'in arrival order')
  t.equal(draining.received.length, MAXCONN, 'nothing new went to the draining replica')
  // The draining replica finishes what it holds (no shutdown-sessions).
  draining.releaseAll()
  staying.releaseAll()
  t.same((await Promise.all([...inFlight, ...queued])).map((a) => a.status), [200, 200, 200, 200, 200, 200, 200], 'every request answered 200')
})

t.test('a full queue: the router answers the next request 503 at once, in the replicas\' shape, and the queued ones are still served', async (t) => {
  if (!requireTool(t, 'haproxy', 'the router queue length test')) return
  const LENGTH = 3
  const replica = new HeldReplica()
  const router = await startRouter(t, [replica], { EDGE_API_ROUTER_QUEUE_LENGTH: String(LENGTH) })
  const inFlight = ['/held/1', '/held/2'].map(async (path) => get(router.url, path))
  await until(() => replica.holding === MAXCONN, 'the replica to hold maxconn requests')
  const queued: Array<Promise<Answer>> = []
  for (let i = 1; i <= LENGTH; i++) {
    queued.push(get(router.url, `/queued/${i}`))
    await until(async () => await router.queued() === i, `request ${i} to wait in the router's queue`)
  }

  // The queue holds EDGE_API_ROUTER_QUEUE_LENGTH: the next two are refused without waiting.
  const refused = [await get(router.url, '/refused/1'), await get(router.url, '/refused/2')]
  t.same(refused.map((a) => a.status), [503, 503], 'beyond the queue length: 503')
  // "At once": far less than timeout queue, however loaded the machine.
  t.ok(refused.every((a) => a.ms < QUEUE_MS / 2), `without waiting timeout queue (${QUEUE_MS} ms): ${refused.map((a) => a.ms.toFixed(0)).join(', ')} ms`)
  for (const a of refused) {
    t.same(JSON.parse(a.body), { message: 'Service Unavailable' }, 'the body a replica sheds with')
    t.equal(a.headers.get('retry-after'), '1', 'and its Retry-After')
    t.equal(a.headers.get('content-type'), 'application/json; charset=utf-8', 'and its content type')
  }
  t.equal(replica.received.length, MAXCONN, 'the refused requests never reached the replica')
  t.equal(await router.queued(), LENGTH, 'the queued requests still wait')

  // The operator can tell them apart: PR in the log and the backend's denied requests, not sQ.
  await until(() => router.queueFull.length === 2, 'the router log to show the two refusals')
  t.equal(router.queueTimeouts.length, 0, 'none is counted as a queue timeout')
  const backend = (await router.stat()).find((row) => row.svname === 'BACKEND')
  t.equal(backend?.dreq, '2', 'the backend counts them as denied requests (haproxy_backend_requests_denied_total)')

  // Slots free one by one: the queued requests are served in order.
  for (let i = 1; i <= LENGTH; i++) {
    replica.releaseOne()
    await until(() => replica.received.length === MAXCONN + i, `queued request ${i} to reach the replica`)
  }
  t.same(replica.received.slice(MAXCONN), ['/queued/1', '/queued/2', '/queued/3'], 'in arrival order')
  replica.releaseAll()
  t.same((await Promise.all([...inFlight, ...queued])).map((a) => a.status), [200, 200, 200, 200, 200], 'every queued request answered 200')
})
