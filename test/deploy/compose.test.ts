import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import t from 'tap'
import { parse } from 'yaml'
import { COMPOSE_DIR, CONFIG_EXAMPLE, composeConfig, composeFiles, graceViolations, parseServices, renderAhead, type ComposeOptions } from '../fixtures/deploy/compose.js'
import { requireTool } from '../fixtures/deploy/tools.js'
import { loadConfig } from '../../src/config.js'
import { cleanEnv } from '../../harness/clean-env.js'

const INVALID = new URL('../fixtures/deploy/invalid-compose.yml', import.meta.url).pathname
const STACK = composeFiles().find((f) => basename(f) === 'docker-compose.yml') as string
const SINGLE = composeFiles().find((f) => basename(f) === 'docker-compose.single.yml') as string
/** The stack's Valkey requires a password (config.env's EDGE_API_REDIS_PASSWORD). */
const STORE_PASSWORD = { EDGE_API_REDIS_PASSWORD: 'a-test-store-password' }

/**
 * What the checks change in the stack's environment, beside the password. The switches that do
 * not touch one another are set in one render, each check reading its own variable: a render is
 * a second of Python (issue 54).
 */
const SWITCHED = {
  ...STORE_PASSWORD,
  EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true',
  CHAIN_REST_URL: 'http://chain.internal:1317',
  EDGE_API_DRAIN_ANNOUNCE: '10s',
  EDGE_API_OTEL_ENABLED: 'true'
}
const STORE_OFF = { ...STORE_PASSWORD, EDGE_API_REDIS_URL: '' }
const TRACING_ELSEWHERE = { EDGE_API_OTEL_ENABLED: 'true', OTEL_ENDPOINT: 'https://collector.example:4317', OTEL_HEADERS: 'authorization=Bearer x' }
const SINGLE_ENVS: Array<Record<string, string>> = [{}, { EDGE_API_DRAIN_ANNOUNCE: '10s' }]
/** A budget beyond the grace period, or a grace period Docker-short: each must be reported. */
const BROKEN: Array<[string, Record<string, string>]> = [
  [STACK, { EDGE_API_SHUTDOWN_BUDGET: '3m' }],
  [STACK, { EDGE_API_STOP_GRACE_PERIOD: '10s' }],
  [STACK, { EDGE_API_STOP_GRACE_PERIOD: 'forever' }],
  [SINGLE, { EDGE_API_SHUTDOWN_BUDGET: '3m' }]
]

// docker-compose (Python) needs a second or more per run on a loaded machine.
t.setTimeout(180_000)

// The checks' docker-compose runs are independent: rendered ahead, 4 at once, they wait on one
// another only for the machine's cores (issue 54: 19 runs one after the other, 20-48 s alone; a
// run is ~0.8 s of Python's CPU, so on a busy machine the gain is the 2 runs saved above). A run
// left out of this list still happens, when its check asks for it.
const withExample = (env?: Record<string, string>): ComposeOptions => ({ envFile: CONFIG_EXAMPLE, env })
await renderAhead([
  ...composeFiles().flatMap((file) => [[file, withExample(STORE_PASSWORD)], [file, { envFile: undefined, env: STORE_PASSWORD }]] as const),
  [INVALID, {}],
  ...BROKEN.map(([file, env]) => [file, withExample({ ...STORE_PASSWORD, ...env })] as const),
  [STACK, { envFile: CONFIG_EXAMPLE }],
  ...[SWITCHED, STORE_OFF, { ...STORE_PASSWORD, ...TRACING_ELSEWHERE }].map((env) => [STACK, withExample(env)] as const),
  ...SINGLE_ENVS.map((env) => [SINGLE, withExample(env)] as const)
])

t.test('the shipped compose files', async (t) => {
  t.same(composeFiles().map((f) => basename(f)), ['docker-compose.single.yml', 'docker-compose.yml'])
})

t.test('docker-compose config -q accepts every compose file, and rejects an invalid one', async (t) => {
  if (!requireTool(t, 'docker-compose', 'the compose checks')) return
  for (const file of composeFiles()) {
    for (const envFile of [CONFIG_EXAMPLE, undefined]) {
      const run = composeConfig(file, { envFile, quiet: true, env: STORE_PASSWORD })
      t.equal(run.status, 0, `${basename(file)} ${envFile === undefined ? 'with defaults' : 'with config.env.example'}: ${run.stderr}`)
    }
  }
  const invalid = composeConfig(INVALID, { quiet: true })
  t.not(invalid.status, 0, 'an invalid compose file fails the check')
  t.match(invalid.stderr, /stop_grace_periodd/, 'and the complaint names the problem')
})

t.test('stop_grace_period exceeds announce + budget on every edge-api service', async (t) => {
  if (!requireTool(t, 'docker-compose', 'the compose checks')) return
  for (const file of composeFiles()) {
    for (const envFile of [CONFIG_EXAMPLE, undefined]) {
      const services = parseServices(composeConfig(file, { envFile, env: STORE_PASSWORD }).stdout)
      const edgeApis = [...services.values()].filter((s) => s.environment.EDGE_API_SHUTDOWN_BUDGET !== undefined)
      t.ok(edgeApis.length >= 1, `${basename(file)} has edge-api services`)
      t.same(graceViolations(services), [], `${basename(file)}: every edge-api service outlives its drain`)
      for (const s of edgeApis) t.equal(s.scalars.stop_grace_period, '3m', 'default 3m')
    }
  }
  // The check can fail.
  for (const [file, env] of BROKEN) {
    const problems = graceViolations(parseServices(composeConfig(file, { envFile: CONFIG_EXAMPLE, env: { ...STORE_PASSWORD, ...env } }).stdout))
    t.equal(problems.length, file === STACK ? 3 : 1, `${basename(file)} with ${JSON.stringify(env)} is reported: ${problems.join('; ')}`)
  }
  t.match(graceViolations(new Map([['x', { environment: { EDGE_API_SHUTDOWN_BUDGET: '2m' }, aliases: [], scalars: {} }]])),
    [/x: announce undefined/], 'a missing announce is reported')
  t.match(graceViolations(new Map([['x', { environment: { EDGE_API_SHUTDOWN_BUDGET: '2m', EDGE_API_DRAIN_ANNOUNCE: '5s' }, aliases: [], scalars: {} }]])),
    [/x: stop_grace_period unset \(Docker: 10s\)/], 'a missing stop_grace_period is reported')
})

t.test('the stack: replicas in the edge-api-pool alias, the router finds them through DNS', async (t) => {
  if (!requireTool(t, 'docker-compose', 'the compose checks')) return
  const services = parseServices(composeConfig(STACK, { envFile: CONFIG_EXAMPLE, env: STORE_PASSWORD }).stdout)
  t.same([...services.keys()].sort(), ['edge-api-1', 'edge-api-2', 'edge-api-3', 'edge-api-router', 'grafana', 'jaeger', 'prometheus', 'valkey'])
  for (const name of ['edge-api-1', 'edge-api-2', 'edge-api-3']) {
    const s = services.get(name)
    t.same(s?.aliases, ['edge-api-pool'], `${name} is in the pool`)
    t.equal(s?.environment.CHAIN_REST_URL, 'http://node-a:1317,http://node-b:1317', 'the chain nodes come from config.env')
    t.equal(s?.environment.EDGE_API_CHAIN_MAX_RESPONSE, '16MiB', 'the answer limit too')
    t.equal(s?.environment.EDGE_API_HOST, '0.0.0.0', 'listens on the container network')
    t.equal(s?.environment.EDGE_API_DRAIN_ANNOUNCE, '5s', 'announces the drain to the router')
    t.equal(s?.environment.EDGE_API_REDIS_URL, 'redis://valkey:6379', 'shares heads and answers through the stack\'s valkey')
    t.notOk('container_name' in (s?.scalars ?? {}), 'no container_name: the service can be scaled')
  }
  const router = services.get('edge-api-router')
  t.match(router?.scalars.image, /^haproxy:\d+\.\d+/, 'the official haproxy image')
  for (const name of ['edge-api-1', 'edge-api-2', 'edge-api-3', 'edge-api-router']) {
    t.equal(services.get(name)?.environment.EDGE_API_EXPOSE_OPTIONAL_ROUTES, 'false', `${name}: the optional routes are off by default`)
  }
  const exposed = parseServices(composeConfig(STACK, withExample(SWITCHED)).stdout)
  t.same(['edge-api-1', 'edge-api-router'].map((name) => exposed.get(name)?.environment.EDGE_API_EXPOSE_OPTIONAL_ROUTES), ['true', 'true'],
    'one switch opens them on the replicas and the router alike')
  t.equal(router?.environment.EDGE_API_POOL_HOST, 'edge-api-pool')
  t.equal(router?.environment.EDGE_API_ROUTER_METRICS_ADDRESS, '127.0.0.1:8405', 'metrics on loopback only')

  // The shared tier's store: Valkey, nothing persisted, bounded memory, not published.
  const valkey = services.get('valkey')
  t.match(valkey?.scalars.image, /^valkey\/valkey:\d+\.\d+/, 'the official valkey image')
  const store = parse(composeConfig(STACK, { envFile: CONFIG_EXAMPLE, env: STORE_PASSWORD }).stdout).services.valkey as { command: string[], ports?: unknown, environment: Record<string, string> }
  t.same(store.command, ['sh', '-c', 'exec valkey-server --requirepass "$$EDGE_API_REDIS_PASSWORD" --save \'\' --appendonly no --maxmemory "$$EDGE_API_VALKEY_MAXMEMORY" --maxmemory-policy allkeys-lru'],
    'a password; no snapshot, no AOF: a restart starts empty; least recently used out')
  t.same(store.environment, { EDGE_API_REDIS_PASSWORD: STORE_PASSWORD.EDGE_API_REDIS_PASSWORD, EDGE_API_VALKEY_MAXMEMORY: '256mb' }, 'the password from config.env, not from this file')
  t.equal(services.get('edge-api-1')?.environment.EDGE_API_REDIS_PASSWORD, STORE_PASSWORD.EDGE_API_REDIS_PASSWORD, 'and the replicas use the same')
  const open = composeConfig(STACK, { envFile: CONFIG_EXAMPLE })
  t.not(open.status, 0, 'without a password the stack does not start')
  t.match(open.stderr, /EDGE_API_REDIS_PASSWORD is required by the stack's valkey/, 'and says which variable to set')
  t.equal(store.ports, undefined, 'not published on the host')
  const off = parseServices(composeConfig(STACK, withExample(STORE_OFF)).stdout)
  t.equal(off.get('edge-api-1')?.environment.EDGE_API_REDIS_URL, '', 'EDGE_API_REDIS_URL= (empty) turns the shared tier off')

  const overridden = parseServices(composeConfig(STACK, withExample(SWITCHED)).stdout)
  t.equal(overridden.get('edge-api-2')?.environment.CHAIN_REST_URL, 'http://chain.internal:1317')
  t.equal(overridden.get('edge-api-2')?.environment.EDGE_API_DRAIN_ANNOUNCE, '10s')
})

t.test('the optional Prometheus scrapes every replica\'s metrics port through Docker DNS; nothing publishes that port', async (t) => {
  if (!requireTool(t, 'docker-compose', 'the compose checks')) return
  type Service = { environment?: Record<string, string>, ports?: string[], profiles?: string[], volumes?: string[], image?: string }
  const services = (parse(composeConfig(STACK, { envFile: CONFIG_EXAMPLE, env: STORE_PASSWORD }).stdout) as { services: Record<string, Service> }).services
  const prometheus = services.prometheus as Service
  t.same(prometheus.profiles, ['metrics'], 'started only with --profile metrics')
  t.match(prometheus.image, /^prom\/prometheus:v3\./)
  t.same(prometheus.ports, ['127.0.0.1:9090:9090/tcp'], 'its UI on the host\'s loopback')
  t.same(prometheus.volumes, ['prometheus.yml', 'alerts.yml'].map((f) => `${COMPOSE_DIR}prometheus/${f}:/etc/prometheus/${f}:ro`),
    'the configuration and, next to it, the alert rules it loads')
  t.ok(existsSync(`${COMPOSE_DIR}prometheus/prometheus.yml`), 'the mounted configuration exists')

  interface Job { job_name: string, metrics_path: string, dns_sd_configs: Array<{ names: string[], type: string, port: number }> }
  const config = parse(readFileSync(`${COMPOSE_DIR}prometheus/prometheus.yml`, 'utf8')) as { global: Record<string, string>, rule_files: string[], scrape_configs: Job[] }
  t.same(config.rule_files, ['alerts.yml'], 'the alert rules, resolved next to the configuration (where compose mounts them)')
  const [job, ...others] = config.scrape_configs
  t.same(others, [], 'one job')
  t.match(job, { job_name: 'edge-api', metrics_path: '/metrics', dns_sd_configs: [{ names: ['edge-api-pool'], type: 'A' }] }, 'every replica behind the pool alias')
  t.equal(config.global.scrape_interval, '5s', 'often enough to see a 5 s drain announcement')

  for (const name of ['edge-api-1', 'edge-api-2', 'edge-api-3']) {
    const replica = services[name] as Service
    t.equal(replica.environment?.EDGE_API_METRICS_PORT, String(job?.dns_sd_configs[0]?.port), `${name} serves metrics on the scraped port`)
    t.equal(replica.environment?.EDGE_API_METRICS_HOST, '0.0.0.0', 'on the compose network')
    t.notOk('ports' in replica, `${name} publishes no port: metrics and traffic reach it only inside the network`)
  }
  const router = services['edge-api-router'] as Service
  t.same(router.ports, ['127.0.0.1:18080:18080/tcp'], 'the router publishes its own port only')
  t.not(router.environment?.EDGE_API_PORT, String(job?.dns_sd_configs[0]?.port), 'and forwards to EDGE_API_PORT, not the metrics port')
})

t.test('the optional Grafana: the metrics profile, Prometheus as its data source, the dashboard provisioned', async (t) => {
  if (!requireTool(t, 'docker-compose', 'the compose checks')) return
  type Service = { environment?: Record<string, string>, ports?: string[], profiles?: string[], volumes?: string[], image?: string, depends_on?: Record<string, unknown> }
  const services = (parse(composeConfig(STACK, { envFile: CONFIG_EXAMPLE, env: STORE_PASSWORD }).stdout) as { services: Record<string, Service> }).services
  const grafana = services.grafana as Service
  t.same(grafana.profiles, ['metrics'], 'started with Prometheus, by --profile metrics')
  t.match(grafana.image, /^grafana\/grafana:\d+\./)
  t.same(Object.keys(grafana.depends_on ?? {}), ['prometheus'])
  t.same(grafana.ports, ['127.0.0.1:3000:3000/tcp'], 'its UI on the host\'s loopback')
  t.same(grafana.volumes, [
    `${COMPOSE_DIR}grafana/provisioning:/etc/grafana/provisioning:ro`,
    `${COMPOSE_DIR}grafana/dashboards:/etc/grafana/dashboards:ro`
  ])

  const datasources = (parse(readFileSync(`${COMPOSE_DIR}grafana/provisioning/datasources/prometheus.yml`, 'utf8')) as { datasources: Array<{ uid: string, type: string, url: string, jsonData: { timeInterval: string } }> }).datasources
  t.equal(datasources.length, 1, 'one data source')
  const [prometheus] = datasources
  t.match(prometheus, { type: 'prometheus', url: 'http://prometheus:9090' }, 'the compose Prometheus, by its service name')
  t.ok(services.prometheus !== undefined, 'which is a service of the stack')
  const scrape = (parse(readFileSync(`${COMPOSE_DIR}prometheus/prometheus.yml`, 'utf8')) as { global: { scrape_interval: string } }).global.scrape_interval
  t.equal(prometheus?.jsonData.timeInterval, scrape, 'Grafana knows the scrape interval ($__rate_interval)')

  const providers = (parse(readFileSync(`${COMPOSE_DIR}grafana/provisioning/dashboards/edge-api.yml`, 'utf8')) as { providers: Array<{ type: string, options: { path: string } }> }).providers
  t.same(providers.map((p) => [p.type, p.options.path]), [['file', '/etc/grafana/dashboards']], 'the provider reads the mounted dashboards')
  const home = grafana.environment?.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH as string
  t.match(home, /^\/etc\/grafana\/dashboards\//, 'the home dashboard is a mounted one')
  const dashboard = JSON.parse(readFileSync(`${COMPOSE_DIR}grafana/dashboards/${basename(home)}`, 'utf8')) as { panels: Array<{ datasource?: { uid: string }, targets?: Array<{ datasource: { uid: string } }> }> }
  const uids = new Set(dashboard.panels.flatMap((p) => [p.datasource, ...(p.targets ?? []).map((q) => q.datasource)]).filter((d) => d !== undefined).map((d) => d.uid))
  t.same([...uids], [prometheus?.uid], 'every panel and query names the provisioned data source')
})

t.test('the optional Jaeger (tracing profile) receives the replicas\' spans over OTLP/gRPC, once tracing is switched on', async (t) => {
  if (!requireTool(t, 'docker-compose', 'the compose checks')) return
  type Service = { environment?: Record<string, string>, ports?: string[], profiles?: string[], image?: string }
  const config = (env: Record<string, string>) => (parse(composeConfig(STACK, { envFile: CONFIG_EXAMPLE, env: { ...STORE_PASSWORD, ...env } }).stdout) as { services: Record<string, Service> }).services
  const services = config({})
  const jaeger = services.jaeger as Service
  t.same(jaeger.profiles, ['tracing'], 'started only with --profile tracing')
  t.match(jaeger.image, /^jaegertracing\/jaeger:2\./)
  t.same(jaeger.ports, ['127.0.0.1:16686:16686/tcp'], 'its UI on the host\'s loopback; OTLP stays inside the network')
  for (const name of ['edge-api-1', 'edge-api-2', 'edge-api-3']) {
    const env = services[name]?.environment as Record<string, string>
    t.equal(env.EDGE_API_OTEL_ENABLED, 'false', `${name}: tracing off by default`)
    t.equal(loadConfig(env).tracing, undefined, 'and edge-api reads it so')
  }
  const on = config(SWITCHED)
  for (const name of ['edge-api-1', 'edge-api-2', 'edge-api-3']) {
    t.match(loadConfig(on[name]?.environment as Record<string, string>).tracing, { endpoint: 'http://jaeger:4317', protocol: 'grpc', headers: {} }, `${name} exports to the Jaeger service, as gonka's compose did`)
  }
  const elsewhere = config(TRACING_ELSEWHERE)
  t.match(loadConfig(elsewhere['edge-api-1']?.environment as Record<string, string>).tracing, { endpoint: 'https://collector.example:4317', headers: { authorization: 'Bearer x' } }, 'or to any collector')
})

t.test('the single replica: no router, so no drain announcement', async (t) => {
  if (!requireTool(t, 'docker-compose', 'the compose checks')) return
  for (const env of SINGLE_ENVS) {
    const services = parseServices(composeConfig(SINGLE, { envFile: CONFIG_EXAMPLE, env }).stdout)
    t.same([...services.keys()], ['edge-api'])
    t.equal(services.get('edge-api')?.environment.EDGE_API_DRAIN_ANNOUNCE, '0', 'EDGE_API_DRAIN_ANNOUNCE=0, whatever config.env says')
  }
})

t.test('parseServices reads normalized compose output', async (t) => {
  const parsed = parseServices([
    'networks: {}',
    'services:',
    '  a:',
    '    environment:',
    "      QUOTED: 'it''s'",
    '      DOUBLE: "x"',
    '      EMPTY: \'\'',
    '    networks:',
    '      default:',
    '        aliases:',
    '        - pool',
    '        ipv4_address: 10.0.0.2',
    '    stop_grace_period: 3m',
    'volumes: {}',
    '  notaservice:',
    ''
  ].join('\n'))
  t.same([...parsed.keys()], ['a'])
  t.same(parsed.get('a'), { environment: { QUOTED: "it's", DOUBLE: 'x', EMPTY: '' }, aliases: ['pool'], scalars: { stop_grace_period: '3m' } })
})

/** The variables a compose file requires: `${VAR:?message}`, without which compose refuses to start. */
const required = (file: string): string[] => [...readFileSync(file, 'utf8').matchAll(/\$\{(\w+):\?/g)].map((m) => m[1] as string)

/** The sh block of `doc` that brings the stack up, as a copy-paste: its lines. */
function quickStart (doc: string): string[] {
  const text = readFileSync(new URL(`../../${doc}`, import.meta.url), 'utf8')
  const block = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string).find((b) => b.includes('docker-compose.yml up -d --build'))
  return (block ?? '').split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'))
}

t.test('the compose quick start (README, docs/compose.md) names what compose requires, and its setup is enough for compose', async (t) => {
  const needed = [...new Set(composeFiles().flatMap(required))]
  t.ok(needed.includes('EDGE_API_REDIS_PASSWORD'), `the stack requires the store's password (all required: ${needed.join(', ')})`)
  for (const doc of ['README.md', 'docs/compose.md']) {
    const lines = quickStart(doc)
    t.ok(lines.length >= 3, `${doc} has the quick start`)
    for (const name of needed) t.ok(lines.some((l) => l.includes(`${name}=`)), `${doc}: the quick start sets ${name}`)
  }
  if (!requireTool(t, 'docker-compose', 'the quick start\'s check') || !requireTool(t, 'openssl', 'the quick start\'s password')) return
  // Its setup lines (before `docker compose ... up`), run as pasted in a checkout, with nothing else set.
  const setup = quickStart('README.md').filter((l) => !/^(docker|curl)\b/.test(l))
  for (const [what, lines] of [['the quick start', setup], ['config.env.example alone', setup.slice(0, 1)]] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'edge-quick-start-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    copyFileSync(CONFIG_EXAMPLE, join(dir, 'config.env.example'))
    const ran = spawnSync('sh', ['-ec', lines.join('\n')], { cwd: dir, env: cleanEnv(), encoding: 'utf8' })
    t.equal(ran.status, 0, `${what}: ${ran.stderr}`)
    const run = composeConfig(STACK, { envFile: join(dir, 'config.env'), quiet: true })
    if (what === 'the quick start') {
      t.equal(run.status, 0, `then docker-compose config accepts the stack: ${run.stderr}`)
      const services = parseServices(composeConfig(STACK, { envFile: join(dir, 'config.env') }).stdout)
      t.match(services.get('valkey')?.environment.EDGE_API_REDIS_PASSWORD, /^[0-9a-f]{64}$/, 'the store gets the generated password')
      t.equal(services.get('edge-api-1')?.environment.EDGE_API_REDIS_PASSWORD, services.get('valkey')?.environment.EDGE_API_REDIS_PASSWORD, 'and the replicas the same')
    } else {
      t.not(run.status, 0, 'without it compose refuses the stack')
      t.match(run.stderr, /EDGE_API_REDIS_PASSWORD/, 'naming the variable')
    }
  }
})
