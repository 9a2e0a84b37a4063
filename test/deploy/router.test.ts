import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { ENTRYPOINT_SH, RENDER_SH, directives, haproxyCheck, renderRouterConfig, runRouterScript } from '../../harness/router-config.js'
import { requireTool } from '../fixtures/deploy/tools.js'
import { runHaproxy } from '../fixtures/deploy/haproxy-process.js'
import { freePorts } from '../../harness/ports.js'
import { startListeningApp } from '../fixtures/listening-app.js'
import { until } from '../../harness/wait.js'

// The backend policy (docs/compose.md, "What the router does"). Every rendering, DNS pool or loopback servers, must carry all of it.
const POLICY = [
  'balance roundrobin',
  'option httpchk',
  'http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host edge-api-router',
  'http-check expect status 200',
  'timeout check 3s',
  'retry-on conn-failure empty-response 502',
  'retries 2',
  'option redispatch',
  'http-request disable-l7-retry if !METH_GET !METH_HEAD !METH_OPTIONS',
  'default-server check inter 1s fall 1 rise 2'
]

// The router's queue (docs/router-queue.md): defaults chosen from measurements.
const QUEUE_DEFAULTS = ['default-server maxconn 64', 'timeout queue 100ms']
// Beyond the queue's length bound: the 503 a replica sheds with (src/admission/shedding.ts), at once.
const queueFull = (length: number): string => 'http-request deny deny_status 503 content-type \'application/json; charset=utf-8\' hdr Retry-After 1 ' +
  `string '{"message":"Service Unavailable"}' if { queue(edge_api_pool) ge ${length} }`

const LOOPBACK = {
  EDGE_API_ROUTER_SERVERS: '127.0.0.1:40001 127.0.0.1:40002 127.0.0.1:40003',
  EDGE_API_ROUTER_ADDRESS: '127.0.0.1',
  EDGE_API_ROUTER_PORT: '40010',
  EDGE_API_ROUTER_METRICS_ADDRESS: '127.0.0.1:40011'
}

/** A stand-in for the haproxy binary that reports `version` and accepts any configuration. */
function fakeHaproxy (dir: string, version: string, checkExit = 0): string {
  const bin = join(dir, `haproxy-${version.replace(/\W/g, '_')}-${checkExit}`)
  writeFileSync(bin, [
    '#!/bin/sh',
    `[ "$1" = -v ] && { echo 'HAProxy version ${version} 2025/08/13 - https://haproxy.org/'; exit 0; }`,
    `[ "$1" = -c ] && exit ${checkExit}`,
    'echo "exec $*"'
  ].join('\n') + '\n')
  chmodSync(bin, 0o755)
  return bin
}

/** A section's directives: from its header line to the next section. */
function section (config: string, header: string): string[] {
  const lines = directives(config)
  const start = lines.indexOf(header)
  const end = lines.findIndex((l, i) => i > start && /^(backend|frontend|resolvers|global|defaults)\b/.test(l))
  return lines.slice(start + 1, end < 0 ? undefined : end)
}

function assertPolicy (t: Test, config: string): void {
  // The ordinary reads' backend with the defaults it inherits.
  const lines = [...section(config, 'defaults'), ...section(config, 'backend edge_api_pool')]
  for (const directive of POLICY) t.ok(lines.includes(directive), `has "${directive}"`)
  t.notOk(lines.some((l) => l.includes('shutdown-sessions')), 'no on-marked-down shutdown-sessions: it would cut a draining replica\'s requests')
  const retryOn = lines.filter((l) => l.startsWith('retry-on'))
  t.equal(retryOn.length, 1, 'one retry-on')
  t.notOk(/\b503\b|all-retryable-errors/.test(retryOn.join(' ')), '503 is never retried')
  t.notOk(lines.some((l) => /^option httpchk\s+\S/.test(l)), 'the check method is set by http-check send, not option httpchk')
}

t.test('DNS pool (Compose): policy, server-template over Docker DNS, metrics on loopback', async (t) => {
  const config = renderRouterConfig({ EDGE_API_ROUTER_INIT_STATE: 'on' })
  assertPolicy(t, config)
  const lines = directives(config)
  t.ok(lines.includes('server-template edgeapi 64 edge-api-pool:18080 resolvers docker init-addr none init-state fully-down'),
    'replicas come from DNS; a new one gets no traffic before its first passing checks')
  t.ok(lines.includes('resolvers docker'), 'a resolvers section')
  t.ok(lines.includes('nameserver dns 127.0.0.11:53'), 'Docker\'s embedded DNS')
  t.ok(lines.includes('bind :18080'), 'listens on every interface of the container')
  t.ok(lines.includes('bind 127.0.0.1:8405'), 'metrics only on loopback')
  t.ok(lines.includes('http-request use-service prometheus-exporter if { path /metrics }'), 'Prometheus exporter')
  t.ok(lines.includes('timeout client 120s') && lines.includes('timeout server 120s'), '120s read timeout, matching the 2m shutdown budget')
  t.ok(QUEUE_DEFAULTS.every((l) => lines.includes(l)), 'the router\'s queue: 64 requests per replica at once, the rest wait up to 100 ms')
  t.ok(lines.includes(queueFull(32)), 'and at most 32 of them wait: the next is refused 503 at once')
  t.notOk(lines.some((l) => l.startsWith('server ')), 'no static servers')
  t.notOk(lines.some((l) => l.startsWith('stats socket')), 'no runtime socket unless asked for')

  const custom = directives(renderRouterConfig({
    EDGE_API_ROUTER_INIT_STATE: 'off',
    EDGE_API_POOL_HOST: 'replicas.internal',
    EDGE_API_PORT: '9000',
    EDGE_API_ROUTER_POOL_SLOTS: '8',
    EDGE_API_ROUTER_DNS_RESOLVER: '10.0.0.2:53',
    EDGE_API_ROUTER_READ_TIMEOUT_SECONDS: '90',
    EDGE_API_ROUTER_CONNECT_TIMEOUT_SECONDS: '5',
    EDGE_API_ROUTER_MAX_CONNECTIONS: '100',
    EDGE_API_ROUTER_SERVER_MAXCONN: '12',
    EDGE_API_ROUTER_QUEUE_TIMEOUT_MS: '250',
    EDGE_API_ROUTER_QUEUE_LENGTH: '7'
  }))
  t.ok(custom.includes('default-server maxconn 12') && custom.includes('timeout queue 250ms') && custom.includes(queueFull(7)), 'the queue settings reach the backend')
  const unbounded = directives(renderRouterConfig({ EDGE_API_ROUTER_INIT_STATE: 'off', EDGE_API_ROUTER_QUEUE_LENGTH: '0' }))
  t.notOk(unbounded.some((l) => l.includes('queue(edge_api_pool) ge')), 'EDGE_API_ROUTER_QUEUE_LENGTH=0: no length bound, timeout queue alone')
  const heavy = (config: string[], connections: number): boolean => config.some((l) => l.includes(`if { sc_conn_cur(0) gt ${connections} }`) && l.startsWith('http-request set-priority-class int(1)')) &&
    config.some((l) => l.startsWith('http-request tarpit deny_status 429') && l.includes('hdr Retry-After 1') && l.endsWith(`if { be_conn_free(edge_api_pool) lt ${connections} } { sc_conn_cur(0) gt ${connections} }`))
  t.ok(heavy(directives(renderRouterConfig({ EDGE_API_ROUTER_INIT_STATE: 'off' })), 16), 'fair share: a client holding a quarter of a replica\'s 64 slots is queued last, and refused while fewer slots than that are free')
  t.ok(heavy(custom, 8), 'and never fewer than 8 connections')
  const blind = directives(renderRouterConfig({ EDGE_API_ROUTER_INIT_STATE: 'off', EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS: '0', EDGE_API_ROUTER_CLIENT_MAX_REQUESTS: '0' }))
  t.notOk(blind.some((l) => l.includes('sc_conn_cur(0) gt')), 'no per-client limits (the router cannot tell clients apart): no fair share at the router either')
  t.ok(unbounded.includes('timeout queue 100ms'), 'the time bound stays')
  t.ok(directives(renderRouterConfig({ EDGE_API_ROUTER_INIT_STATE: 'off', EDGE_API_ROUTER_SERVER_MAXCONN: '0' })).includes('default-server maxconn 0'),
    'EDGE_API_ROUTER_SERVER_MAXCONN=0: no per-server limit (HAProxy\'s 0), so no queue')
  t.ok(custom.includes('server-template edgeapi 8 replicas.internal:9000 resolvers docker init-addr none'), 'settings reach the server-template')
  t.ok(custom.includes('nameserver dns 10.0.0.2:53'))
  t.ok(custom.includes('timeout server 90s') && custom.includes('timeout connect 5s') && custom.includes('timeout http-request 5s'))
  t.equal(custom.filter((l) => l === 'maxconn 100').length, 2, 'global and frontend maxconn')
})

t.test('loopback servers (tests): the same policy, one server line per replica', async (t) => {
  const config = renderRouterConfig({ ...LOOPBACK, EDGE_API_ROUTER_INIT_STATE: 'on', EDGE_API_ROUTER_STATS_SOCKET: '/tmp/edge-api-router.sock' })
  assertPolicy(t, config)
  const lines = directives(config)
  t.same(section(config, 'backend edge_api_pool').filter((l) => l.startsWith('server')), [
    'server edgeapi1 127.0.0.1:40001 init-state fully-down',
    'server edgeapi2 127.0.0.1:40002 init-state fully-down',
    'server edgeapi3 127.0.0.1:40003 init-state fully-down'
  ])
  t.ok(lines.includes('bind 127.0.0.1:40010'))
  t.ok(lines.includes('bind 127.0.0.1:40011'))
  t.ok(lines.includes('stats socket /tmp/edge-api-router.sock mode 600 level operator'))
  t.notOk(lines.some((l) => l.startsWith('resolvers') || l.includes('server-template')), 'no DNS in loopback mode')

  // Both renderings differ only in server lines, listen addresses and the socket.
  const dns = directives(renderRouterConfig({ EDGE_API_ROUTER_INIT_STATE: 'on' }))
  const policyOf = (ls: string[]): string[] => ls.filter((l) => !/^(server|bind|stats socket|resolvers|nameserver|accepted_payload_size|resolve_retries|timeout (resolve|retry)|hold )/.test(l))
  t.same(policyOf(lines), policyOf(dns), 'the loopback rendering carries exactly the deployed policy')
})

t.test('long-polls and event streams go to a backend of their own (test/deploy/router-waiting-lane.test.ts): the same replicas and policy, no shutdown-sessions, timeouts above the longest wait', async (t) => {
  for (const config of [renderRouterConfig({ EDGE_API_ROUTER_INIT_STATE: 'on' }), renderRouterConfig({ ...LOOPBACK, EDGE_API_ROUTER_INIT_STATE: 'on' })]) {
    const frontend = section(config, 'frontend edge_api_in')
    const lanes = frontend.filter((l) => l.startsWith('use_backend edge_api_waiting if METH_GET '))
    t.equal(lanes.length, 5, 'the stream and four ways to ask a wait')
    t.ok(frontend.indexOf(lanes.at(-1) as string) < frontend.indexOf('default_backend edge_api_pool'))
    const waiting = section(config, 'backend edge_api_waiting')
    const pool = section(config, 'backend edge_api_pool')
    t.same(waiting.filter((l) => /^server/.test(l)), pool.filter((l) => /^server/.test(l)), 'the same replicas')
    for (const directive of POLICY.filter((d) => d !== 'balance roundrobin' && d !== 'timeout check 3s')) t.ok(waiting.includes(directive), `has "${directive}"`)
    t.notOk(waiting.some((l) => l.includes('shutdown-sessions') || (l.startsWith('retry-on') && /\b503\b/.test(l))), 'no shutdown-sessions, 503 never retried')
    const readTimeout = Number(/^timeout server (\d+)s$/m.exec(section(config, 'defaults').join('\n'))?.[1])
    t.ok(readTimeout >= 60 && readTimeout > 30 * (1 + 1 / 16) && readTimeout > 15 * 4, `timeout server ${readTimeout}s is above the longest wait and four heartbeats`)
  }
})

t.test('init-state follows the HAProxy version: 3.1+ has it, older releases reject the keyword', async (t) => {
  const dir = t.testdir()
  const withVersion = (version: string): string[] =>
    directives(renderRouterConfig({ ...LOOPBACK, HAPROXY_BIN: fakeHaproxy(dir, version) })).filter((l) => l.startsWith('server '))
  t.ok(withVersion('3.2.4-98813a1').every((l) => l.endsWith(' init-state fully-down')), '3.2 (the Compose image)')
  t.ok(withVersion('3.1.0').every((l) => l.endsWith(' init-state fully-down')), '3.1')
  t.ok(withVersion('4.0.1').every((l) => l.endsWith(' init-state fully-down')), '4.0')
  t.ok(withVersion('2.6.12-1+deb12u4').every((l) => !l.includes('init-state')), '2.6 (Debian 12)')
  t.ok(withVersion('3.0.11').every((l) => !l.includes('init-state')), '3.0')

  const garbled = join(dir, 'garbled')
  writeFileSync(garbled, '#!/bin/sh\necho nonsense\n')
  chmodSync(garbled, 0o755)
  const unknown = runRouterScript(RENDER_SH, { ...LOOPBACK, HAPROXY_BIN: garbled })
  t.equal(unknown.status, 1)
  t.match(unknown.stderr, /cannot read the version of .*garbled; set EDGE_API_ROUTER_INIT_STATE=on\|off/)
})

t.test('the renderer refuses malformed settings, naming them', async (t) => {
  const refusals: Array<[Record<string, string>, RegExp]> = [
    [{ EDGE_API_PORT: 'invalid' }, /invalid numeric setting EDGE_API_PORT='invalid'/],
    [{ EDGE_API_PORT: '70000' }, /invalid port EDGE_API_PORT='70000'/],
    [{ EDGE_API_ROUTER_PORT: '0' }, /EDGE_API_ROUTER_PORT='0' \(must be greater than 0\)/],
    [{ EDGE_API_ROUTER_POOL_SLOTS: '-1' }, /EDGE_API_ROUTER_POOL_SLOTS='-1'/],
    [{ EDGE_API_ROUTER_MAX_CONNECTIONS: '1e3' }, /EDGE_API_ROUTER_MAX_CONNECTIONS='1e3'/],
    [{ EDGE_API_ROUTER_READ_TIMEOUT_SECONDS: '2m' }, /EDGE_API_ROUTER_READ_TIMEOUT_SECONDS='2m'/],
    [{ EDGE_API_ROUTER_CONNECT_TIMEOUT_SECONDS: '' }, /^$/],
    [{ EDGE_API_ROUTER_SERVER_MAXCONN: '-1' }, /invalid numeric setting EDGE_API_ROUTER_SERVER_MAXCONN='-1' \(digits only\)/],
    [{ EDGE_API_ROUTER_SERVER_MAXCONN: '64 maxqueue 1' }, /EDGE_API_ROUTER_SERVER_MAXCONN='64 maxqueue 1'/],
    [{ EDGE_API_ROUTER_SERVER_MAXCONN: '' }, /^$/],
    [{ EDGE_API_ROUTER_QUEUE_TIMEOUT_MS: '0' }, /invalid numeric setting EDGE_API_ROUTER_QUEUE_TIMEOUT_MS='0' \(must be greater than 0\)/],
    [{ EDGE_API_ROUTER_QUEUE_TIMEOUT_MS: '100ms' }, /invalid numeric setting EDGE_API_ROUTER_QUEUE_TIMEOUT_MS='100ms' \(digits only\)/],
    [{ EDGE_API_ROUTER_QUEUE_LENGTH: '-1' }, /invalid numeric setting EDGE_API_ROUTER_QUEUE_LENGTH='-1' \(digits only\)/],
    [{ EDGE_API_ROUTER_QUEUE_LENGTH: '32 }' }, /EDGE_API_ROUTER_QUEUE_LENGTH='32 }'/],
    [{ EDGE_API_ROUTER_QUEUE_LENGTH: '' }, /^$/],
    [{ EDGE_API_POOL_HOST: 'pool\n  server evil 10.0.0.1:80' }, /invalid host EDGE_API_POOL_HOST=/],
    [{ EDGE_API_POOL_HOST: 'a|b' }, /invalid host EDGE_API_POOL_HOST='a\|b'/],
    [{ EDGE_API_ROUTER_DNS_RESOLVER: '127.0.0.11' }, /invalid address EDGE_API_ROUTER_DNS_RESOLVER='127.0.0.11' \(host:port\)/],
    [{ EDGE_API_ROUTER_METRICS_ADDRESS: '127.0.0.1:x' }, /EDGE_API_ROUTER_METRICS_ADDRESS='x'/],
    [{ EDGE_API_ROUTER_ADDRESS: '0.0.0.0 ssl' }, /invalid host EDGE_API_ROUTER_ADDRESS/],
    [{ EDGE_API_ROUTER_SERVERS: '127.0.0.1:1 127.0.0.1' }, /invalid address EDGE_API_ROUTER_SERVERS='127.0.0.1'/],
    [{ EDGE_API_ROUTER_SERVERS: '127.0.0.1:1&x' }, /EDGE_API_ROUTER_SERVERS/],
    [{ EDGE_API_ROUTER_STATS_SOCKET: '/tmp/a b' }, /invalid path EDGE_API_ROUTER_STATS_SOCKET='\/tmp\/a b'/],
    [{ EDGE_API_ROUTER_INIT_STATE: 'maybe' }, /invalid EDGE_API_ROUTER_INIT_STATE='maybe' \(auto, on or off\)/],
    [{ EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'yes' }, /invalid EDGE_API_EXPOSE_OPTIONAL_ROUTES='yes' \(true or false\)/],
    [{ EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'TRUE' }, /invalid EDGE_API_EXPOSE_OPTIONAL_ROUTES='TRUE' \(true or false\)/],
    [{ EDGE_API_ROUTER_TEMPLATE: '/nonexistent/template' }, /template \/nonexistent\/template is not readable/],
    [{ EDGE_API_ROUTER_INIT_STATE: 'auto', HAPROXY_BIN: '/nonexistent/haproxy' }, /cannot read the version of \/nonexistent\/haproxy; set EDGE_API_ROUTER_INIT_STATE=on\|off/]
  ]
  for (const [env, message] of refusals) {
    const result = runRouterScript(RENDER_SH, { EDGE_API_ROUTER_INIT_STATE: 'off', ...env })
    if (message.source === '^$') {
      // An empty value means "use the default", as in the container's environment.
      t.equal(result.status, 0, `${JSON.stringify(env)} falls back to the default`)
      continue
    }
    t.equal(result.status, 1, `${JSON.stringify(env)} is refused`)
    t.match(result.stderr, /^edge-api-router: /)
    t.match(result.stderr, message)
    t.equal(result.stdout, '', 'nothing rendered')
  }
})

t.test('haproxy -c accepts every rendering', async (t) => {
  if (!requireTool(t, 'haproxy', 'the router configuration check')) return
  const dir = t.testdir()
  // A unix socket path is limited to ~100 bytes: keep it short, outside the test directory.
  const socketDir = mkdtempSync(join(tmpdir(), 'edge-router-'))
  t.teardown(() => rmSync(socketDir, { recursive: true, force: true }))
  const renderings: Record<string, Record<string, string>> = {
    'dns pool': {},
    loopback: { ...LOOPBACK, EDGE_API_ROUTER_STATS_SOCKET: join(socketDir, 'haproxy.sock') },
    'optional routes exposed': { ...LOOPBACK, EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' },
    'no router queue': { ...LOOPBACK, EDGE_API_ROUTER_SERVER_MAXCONN: '0' },
    'queue bounded by time alone': { ...LOOPBACK, EDGE_API_ROUTER_QUEUE_LENGTH: '0' }
  }
  for (const [name, env] of Object.entries(renderings)) {
    const file = join(dir, `${name.replace(/ /g, '-')}.cfg`)
    // auto: init-state appears exactly when this haproxy supports it.
    writeFileSync(file, renderRouterConfig(env))
    t.equal(haproxyCheck(file), null, `${name}: haproxy -c accepts it`)
  }
  const broken = join(dir, 'broken.cfg')
  writeFileSync(broken, readFileSync(join(dir, 'loopback.cfg'), 'utf8').replace('balance roundrobin', 'balance sometimes'))
  t.not(haproxyCheck(broken), null, 'and the check does reject a broken configuration')
})

t.test('entrypoint: renders, checks with haproxy -c, then execs HAProxy in the foreground', async (t) => {
  const dir = t.testdir()
  const out = join(dir, 'haproxy.cfg')
  const ok = fakeHaproxy(dir, '3.2.4')
  const started = runRouterScript(ENTRYPOINT_SH, { HAPROXY_BIN: ok, EDGE_API_ROUTER_OUT: out })
  t.equal(started.status, 0)
  t.equal(started.stdout, `exec -W -db -f ${out}\n`, 'exec (HAProxy gets the stop signal), master-worker, foreground')
  t.ok(directives(readFileSync(out, 'utf8')).includes('server-template edgeapi 64 edge-api-pool:18080 resolvers docker init-addr none init-state fully-down'))

  for (const flag of ['1', 'true', 'yes']) {
    const only = runRouterScript(ENTRYPOINT_SH, { HAPROXY_BIN: ok, EDGE_API_ROUTER_OUT: out, EDGE_API_ROUTER_RENDER_ONLY: flag })
    t.equal(only.status, 0)
    t.equal(only.stdout, '', `RENDER_ONLY=${flag}: HAProxy is not started`)
  }
  const bogus = runRouterScript(ENTRYPOINT_SH, { HAPROXY_BIN: ok, EDGE_API_ROUTER_OUT: out, EDGE_API_ROUTER_RENDER_ONLY: 'sometimes' })
  t.equal(bogus.status, 1)
  t.match(bogus.stderr, /invalid EDGE_API_ROUTER_RENDER_ONLY='sometimes'/)

  const rejecting = runRouterScript(ENTRYPOINT_SH, { HAPROXY_BIN: fakeHaproxy(dir, '3.2.4', 1), EDGE_API_ROUTER_OUT: out })
  t.equal(rejecting.status, 1)
  t.match(rejecting.stderr, /HAProxy rejects the rendered configuration/)
  t.equal(rejecting.stdout, '', 'never started')

  const badSetting = runRouterScript(ENTRYPOINT_SH, { HAPROXY_BIN: ok, EDGE_API_ROUTER_OUT: out, EDGE_API_PORT: 'x' })
  t.equal(badSetting.status, 1)
  t.match(badSetting.stderr, /invalid numeric setting EDGE_API_PORT='x'/)
  t.equal(badSetting.stdout, '', 'never started')

  if (!requireTool(t, 'haproxy', 'the entrypoint check with the real binary')) return
  const real = runRouterScript(ENTRYPOINT_SH, { EDGE_API_ROUTER_OUT: out, EDGE_API_ROUTER_RENDER_ONLY: '1', HAPROXY_BIN: 'haproxy' })
  t.equal(real.status, 0, `real haproxy -c accepts the Compose rendering: ${real.stderr}`)
})

const OPTIONAL_BLOCK = [
  'acl optional_route path,url_dec -m reg -i ^/v1/(verify-proof|verify-block|debug)(/|$)',
  'http-request return status 403 content-type application/json string \'{"message":"this optional route is not exposed (EDGE_API_EXPOSE_OPTIONAL_ROUTES=false)"}\' if optional_route'
]

t.test('the optional verify/debug routes are refused with 403 unless EDGE_API_EXPOSE_OPTIONAL_ROUTES=true', async (t) => {
  const envs: Array<Record<string, string>> = [{}, { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'false' }, { EDGE_API_EXPOSE_OPTIONAL_ROUTES: '' }, { ...LOOPBACK }]
  for (const env of envs) {
    const lines = directives(renderRouterConfig({ EDGE_API_ROUTER_INIT_STATE: 'off', ...env }))
    t.same(lines.filter((l) => l.includes('optional_route')), OPTIONAL_BLOCK, `${JSON.stringify(env)}: blocked (the default)`)
    const frontend = lines.slice(lines.indexOf('frontend edge_api_in'), lines.indexOf('default_backend edge_api_pool'))
    t.ok(OPTIONAL_BLOCK.every((l) => frontend.includes(l)), 'in the public frontend, before the backend')
  }
  const exposed = directives(renderRouterConfig({ EDGE_API_ROUTER_INIT_STATE: 'off', EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' }))
  t.notOk(exposed.some((l) => l.includes('optional_route')), 'exposed: nothing refused')
})

t.test('a real HAProxy refuses them, however the path is spelled, and passes everything else on', async (t) => {
  if (!requireTool(t, 'haproxy', 'the optional-routes check with the real binary')) return
  const dir = t.testdir()
  const [routerPort, metricsPort, deadPort] = await freePorts(3) as [number, number, number]
  const origin = `http://127.0.0.1:${routerPort}`
  const start = async (exposed: string): Promise<() => Promise<void>> => {
    const file = join(dir, `haproxy-${exposed}.cfg`)
    // The one server is never up: what reaches the backend is 503, what the rule refuses is 403.
    writeFileSync(file, renderRouterConfig({
      EDGE_API_ROUTER_SERVERS: `127.0.0.1:${deadPort}`,
      EDGE_API_ROUTER_ADDRESS: '127.0.0.1',
      EDGE_API_ROUTER_PORT: String(routerPort),
      EDGE_API_ROUTER_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
      EDGE_API_EXPOSE_OPTIONAL_ROUTES: exposed
    }))
    const stop = runHaproxy(t, file)
    await until(async () => fetch(`${origin}/healthz`).then(() => true, () => false), 'haproxy to start listening', { intervalMs: 50 })
    return stop
  }
  const status = async (path: string, method = 'GET'): Promise<number> => (await fetch(`${origin}${path}`, { method })).status
  const refused = ['/v1/verify-proof', '/v1/verify-block', '/v1/debug/verify/5', '/v1/debug/pubkey-to-addr/abc', '/v1/debug', '/v1/debug/',
    '/v1/%64ebug/verify/5', '/v1/verify%2Dblock', '/v1/DEBUG/verify/5', '/v1/debug/verify/5?x=1']
  const method = (path: string): string => path.startsWith('/v1/verify') ? 'POST' : 'GET'

  const stop = await start('false')
  for (const path of refused) {
    const res = await fetch(`${origin}${path}`, { method: method(path) })
    t.equal(res.status, 403, path)
    t.equal(res.headers.get('content-type'), 'application/json')
    t.same(await res.json(), { message: 'this optional route is not exposed (EDGE_API_EXPOSE_OPTIONAL_ROUTES=false)' })
  }
  for (const path of ['/v1/status', '/v1/debugger', '/v1/verify-proofs', '/v1/epochs/1/participants', '/v2/debug/verify/5']) {
    t.equal(await status(path), 503, `${path} passes on (to a backend that is down)`)
  }
  await stop()

  await start('true')
  for (const path of refused.slice(0, 4)) t.equal(await status(path, method(path)), 503, `exposed: ${path} passes on`)
})

// The router's request id: client and frontend address:port, time, request counter and pid, in hex.
const ROUTER_ID = /^[0-9A-F]{8}:[0-9A-F]+_[0-9A-F]{8}:[0-9A-F]+_[0-9A-F]+_[0-9A-F]+:[0-9A-F]+$/
const REQUEST_ID = [
  'unique-id-format %{+X}o\\ %ci:%cp_%fi:%fp_%Ts_%rt:%pid',
  'unique-id-header X-Request-Id',
  'http-request del-header X-Request-Id'
]

t.test('every rendering gives each request the router\'s own X-Request-Id, replacing a client\'s', async (t) => {
  for (const env of [{}, { ...LOOPBACK }, { ...LOOPBACK, EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' }]) {
    const lines = directives(renderRouterConfig({ EDGE_API_ROUTER_INIT_STATE: 'off', ...env }))
    const frontend = lines.slice(lines.indexOf('frontend edge_api_in'), lines.indexOf('default_backend edge_api_pool'))
    t.same(frontend.filter((l) => /unique-id|X-Request-Id/i.test(l)), REQUEST_ID, `${JSON.stringify(env)}: in the public frontend`)
  }
})

t.test('through a real HAProxy, a request arrives with the router\'s id: in the access line and echoed to the client', async (t) => {
  if (!requireTool(t, 'haproxy', 'the request-id check with the real binary')) return
  const service = await startListeningApp(t, { announceMs: 0, budgetMs: 1000 })
  const [routerPort, metricsPort] = await freePorts(2) as [number, number]
  const file = join(t.testdir(), 'haproxy.cfg')
  writeFileSync(file, renderRouterConfig({
    EDGE_API_ROUTER_SERVERS: `127.0.0.1:${service.port}`,
    EDGE_API_ROUTER_ADDRESS: '127.0.0.1',
    EDGE_API_ROUTER_PORT: String(routerPort),
    EDGE_API_ROUTER_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`
  }))
  runHaproxy(t, file)
  const origin = `http://127.0.0.1:${routerPort}`
  await until(async () => {
    try {
      return (await fetch(`${origin}/healthz`)).status === 200
    } catch {
      return false
    }
  }, 'the router to pass requests on', { intervalMs: 50 })

  const from = service.logs.length
  const plain = await fetch(`${origin}/v1/status`)
  t.equal(plain.status, 200)
  // A client claiming the id edge-api gives its first request.
  const claiming = await fetch(`${origin}/v1/status`, { headers: { 'x-request-id': 'r1' } })
  t.equal(claiming.status, 200)
  const echoed = [plain.headers.get('x-request-id'), claiming.headers.get('x-request-id')] as [string, string]
  for (const id of echoed) t.match(id, ROUTER_ID, `the answer carries the router's id: ${id}`)
  t.not(echoed[0], echoed[1], 'one per request')
  t.not(echoed[1], 'r1', 'the client\'s own id was replaced')

  await until(() => service.logs.slice(from).filter((l) => l.msg === 'request' && l.route === '/v1/status').length === 2, 'both access lines')
  const lines = service.logs.slice(from).filter((l) => l.msg === 'request' && l.route === '/v1/status')
  t.same(lines.map((l) => l.clientReqId), echoed, 'the access line has the id the router set, as clientReqId')
  for (const line of lines) t.match(line.reqId, /^r[0-9a-z]+$/, 'beside edge-api\'s own id')
  t.not(lines[0]?.reqId, lines[1]?.reqId, 'the two requests stay apart in the log')
})
