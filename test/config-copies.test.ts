import t from 'tap'
import { parse } from 'yaml'
import { loadConfig, SETTINGS, type ConfigKey, type Setting } from '../src/config.js'
import { markdownTable, repoFile } from './fixtures/markdown.js'

// Every copy of the settings list is checked against the one in src/config.ts (SETTINGS): a
// variable left out, one the service does not read, or a default that differs fails here,
// naming the file. A copy may pin a value only where this file says why.

const KEYS = Object.keys(SETTINGS) as ConfigKey[]
const setting = (key: string): Setting | undefined => (SETTINGS as Record<string, Setting>)[key]

/** A value every copy's environment can boot with, for the one setting that has no default. */
const CHAIN = { CHAIN_REST_URL: 'http://node:1317' }

t.test('loadConfig reads exactly the settings of the list', async (t) => {
  const read = new Set<string>()
  const env = new Proxy<Record<string, string>>({ ...CHAIN }, {
    get: (target, key: string) => { read.add(key); return target[key] }
  })
  loadConfig(env)
  t.same([...read].sort(), [...KEYS].sort())
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
  const [ours = '', compose = ''] = repoFile('config.env.example').split('# --- compose / router settings ---')
  const lines = (text: string): Array<[string, string]> => [...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1] as string, m[2] as string])
  const example = new Map(lines(ours))
  t.same([...example.keys()].sort(), [...KEYS].sort(), 'every setting, and no other, before the compose section')
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

const composeEnvironments: Record<string, (doc: Record<string, any>) => Record<string, string>> = {
  'compose/docker-compose.yml': (doc) => doc['x-edge-api'].environment,
  'compose/docker-compose.single.yml': (doc) => doc.services['edge-api'].environment
}

for (const [file, environment] of Object.entries(composeEnvironments)) {
  t.test(`${file} forwards every setting with its default, or pins it for a reason`, async (t) => {
    const env = environment(parse(repoFile(file)))
    t.same(Object.keys(env).sort(), [...KEYS].sort(), 'every setting, and no other: one left out would never reach the container')
    const pinned = PINNED[file] ?? {}
    for (const key of KEYS) {
      const expected = pinned[key] ?? `\${${key}:-${setting(key)?.default ?? ''}}`
      t.equal(String(env[key]), expected, `${key}: ${expected}`)
    }
    t.ok(loadConfig({ ...Object.fromEntries(Object.entries(pinned)), ...CHAIN }), 'the pinned values boot')
  })
}

t.test('kubernetes/configmap.yaml: every setting a cluster uses, each with its default', async (t) => {
  const data = parse(repoFile('kubernetes/configmap.yaml')).data as Record<string, string>
  // CHAIN_GRPC_URL only stands in for an unset CHAIN_REST_URL, which a cluster sets.
  const used = KEYS.filter((key) => key !== 'CHAIN_GRPC_URL')
  t.same(Object.keys(data).sort(), [...used].sort(), 'every setting, and no other')
  // The pods' own address for metrics: every interface, like EDGE_API_HOST's default.
  const pinned: Partial<Record<ConfigKey, string>> = { EDGE_API_METRICS_HOST: '0.0.0.0' }
  for (const key of used) {
    const expected = pinned[key] ?? setting(key)?.default
    if (expected !== undefined) t.equal(data[key], expected, `${key}: ${expected}`)
  }
  t.ok(loadConfig(data), 'the ConfigMap boots')
})
