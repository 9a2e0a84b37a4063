import t from 'tap'
import { parse } from 'yaml'
import { loadConfig, SETTINGS, type ConfigKey, type Setting } from '../src/config.js'
import { TRACING_VARIABLES } from '../src/tracing/settings.js'
import { markdownTable, repoFile } from './fixtures/markdown.js'

// Every copy of the settings list is checked against the one in src/config.ts (SETTINGS): a
// variable left out, one the service does not read, or a default that differs fails here,
// naming the file. A copy may pin a value only where this file says why. The OpenTelemetry
// variables tracing reads besides EDGE_API_OTEL_ENABLED have their own list, TRACING_VARIABLES
// in src/tracing/settings.ts (the standard OTEL_* names, no defaults of ours): a copy may
// forward or show any of them, and nothing outside both lists.

const KEYS = Object.keys(SETTINGS) as ConfigKey[]
const setting = (key: string): Setting | undefined => (SETTINGS as Record<string, Setting>)[key]
const TRACING = new Set<string>(TRACING_VARIABLES)
/** The keys of a copy that are not OpenTelemetry's, and those that are. */
const ours = (keys: Iterable<string>): string[] => [...keys].filter((key) => !TRACING.has(key)).sort()

/** A value every copy's environment can boot with, for the one setting that has no default. */
const CHAIN = { CHAIN_REST_URL: 'http://node:1317' }

t.test('loadConfig reads exactly the settings of the list', async (t) => {
  const read = new Set<string>()
  const env = new Proxy<Record<string, string>>({ ...CHAIN }, {
    get: (target, key: string) => { read.add(key); return target[key] }
  })
  loadConfig(env)
  t.same(ours(read), [...KEYS].sort(), 'every setting of the list')
  // With tracing on, through Go's endpoint variable and through the standard ones.
  const endpoints: Array<Record<string, string>> = [{ OTEL_ENDPOINT: 'http://collector:4317' }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }]
  for (const endpoint of endpoints) {
    loadConfig(new Proxy<Record<string, string>>({ ...CHAIN, EDGE_API_OTEL_ENABLED: 'true', ...endpoint }, {
      get: (target, key: string) => { read.add(key); return target[key] }
    }))
  }
  t.same([...read].filter((key) => TRACING.has(key)).sort(), [...TRACING].sort(), 'with tracing on, every OpenTelemetry variable of its list, and nothing else')
  t.same(ours(read), [...KEYS].sort(), 'and no variable outside both lists')
})

t.test('the README configuration table: one row per setting, each with its default', async (t) => {
  const rows = markdownTable(repoFile('README.md'), 'variable')
  const names = rows.map((row) => /^`([A-Z0-9_]+)`$/.exec(row[0] ?? '')?.[1])
  t.same(names, KEYS, 'every setting, in the order of the list, and no other')
  for (const [name, shown] of rows) {
    const key = (name ?? '').replaceAll('`', '')
    const expected = setting(key)?.default ?? setting(key)?.unset
    t.equal((shown ?? '').replaceAll('`', ''), expected, `${key}: ${expected}`)
  }
})

t.test('config.env.example: every setting, each with its default, and the example boots', async (t) => {
  // What follows this line is read by Docker Compose, not by edge-api.
  const [service = '', compose = ''] = repoFile('config.env.example').split('# --- compose / router settings ---')
  const lines = (text: string): Array<[string, string]> => [...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1] as string, m[2] as string])
  const example = new Map(lines(service))
  t.same(ours(example.keys()), [...KEYS].sort(), 'every setting, and no other but OpenTelemetry\'s, before the compose section')
  t.notOk(lines(compose).some(([key]) => setting(key) !== undefined), 'no edge-api setting in the compose section')
  for (const key of KEYS) {
    const value = setting(key)?.default
    if (value !== undefined) t.equal(example.get(key), value, `${key}=${value}`)
  }
  t.ok(loadConfig(Object.fromEntries(example)), 'the example itself boots')
})

// A value a copy sets instead of forwarding the operator's: pinned, with the reason.
const PINNED: Record<string, Partial<Record<ConfigKey, string>>> = {
  'compose/docker-compose.yml': {
    // A container listens on every interface, whatever config.env says for a local run.
    EDGE_API_HOST: '0.0.0.0',
    // compose/prometheus/prometheus.yml scrapes this port on every replica.
    EDGE_API_METRICS_PORT: '9464',
    EDGE_API_METRICS_HOST: '0.0.0.0'
  },
  'compose/docker-compose.single.yml': {
    EDGE_API_HOST: '0.0.0.0',
    // No balancer watches /readyz: announcing the drain would only delay the stop.
    EDGE_API_DRAIN_ANNOUNCE: '0'
  }
}

// A copy's own default, where it differs from the service's: the three-replica stack ships
// its store (the valkey service) and points the replicas at it; an empty value (`:-` would
// not keep it empty) still turns the shared tier off.
const OWN_DEFAULTS: Record<string, Partial<Record<ConfigKey, string>>> = {
  'compose/docker-compose.yml': {
    EDGE_API_REDIS_URL: '$' + '{EDGE_API_REDIS_URL-redis://valkey:6379}',
    // The router's X-Forwarded-For, from the compose network's private addresses.
    EDGE_API_TRUSTED_PROXIES: '$' + '{EDGE_API_TRUSTED_PROXIES:-uniquelocal}'
  }
}

const composeEnvironments: Record<string, (doc: Record<string, any>) => Record<string, string>> = {
  'compose/docker-compose.yml': (doc) => doc['x-edge-api'].environment,
  'compose/docker-compose.single.yml': (doc) => doc.services['edge-api'].environment
}

for (const [file, environment] of Object.entries(composeEnvironments)) {
  t.test(`${file} forwards every setting with its default, or pins it for a reason`, async (t) => {
    const env = environment(parse(repoFile(file)))
    t.same(ours(Object.keys(env)), [...KEYS].sort(), 'every setting, and no other but OpenTelemetry\'s: one left out would never reach the container')
    const pinned = PINNED[file] ?? {}
    for (const key of KEYS) {
      const expected = pinned[key] ?? OWN_DEFAULTS[file]?.[key] ?? `\${${key}:-${setting(key)?.default ?? ''}}`
      t.equal(String(env[key]), expected, `${key}: ${expected}`)
    }
    t.ok(loadConfig({ ...Object.fromEntries(Object.entries(pinned)), ...CHAIN }), 'the pinned values boot')
  })
}

t.test('kubernetes/configmap.yaml: every setting a cluster uses, each with its default', async (t) => {
  const data = parse(repoFile('kubernetes/configmap.yaml')).data as Record<string, string>
  // CHAIN_GRPC_URL only stands in for an unset CHAIN_REST_URL, which a cluster sets.
  const used = KEYS.filter((key) => key !== 'CHAIN_GRPC_URL')
  t.same(ours(Object.keys(data)), [...used].sort(), 'every setting, and no other but OpenTelemetry\'s')
  // The pods' own address for metrics: every interface, like EDGE_API_HOST's default.
  const pinned: Partial<Record<ConfigKey, string>> = { EDGE_API_METRICS_HOST: '0.0.0.0' }
  for (const key of used) {
    const expected = pinned[key] ?? setting(key)?.default
    if (expected !== undefined) t.equal(data[key], expected, `${key}: ${expected}`)
  }
  t.ok(loadConfig(data), 'the ConfigMap boots')
  // config.env.example's OpenTelemetry variables are shown, commented out: unset, the exporter's
  // standard defaults apply.
  const commented = [...repoFile('kubernetes/configmap.yaml').matchAll(/^\s*#\s*(OTEL_[A-Z0-9_]+):/gm)].map((m) => m[1] as string)
  const exampleTracing = [...repoFile('config.env.example').matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1] as string).filter((key) => TRACING.has(key))
  t.ok(commented.includes('OTEL_ENDPOINT'), 'the ConfigMap shows Go\'s OTEL_ENDPOINT')
  for (const key of exampleTracing) t.ok(key in data || commented.includes(key), `${key} is in configmap.yaml`)
})
