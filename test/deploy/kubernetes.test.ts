import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { KUBERNETES_DIR, type Manifest, checkEach, checkManifests, contractProblems, imageCommand, kustomizationProblems, loadManifests } from '../fixtures/deploy/kubernetes.js'
import { schemaProblems, typeProblems } from '../fixtures/deploy/kubernetes-schema.js'
import { cleanEnv } from '../../harness/clean-env.js'

// The first type check parses TypeScript's lib and the kubernetes-models declarations.
t.setTimeout(180_000)

const manifests = loadManifests()
type Doc = Record<string, any>
const find = (ms: readonly Manifest[], kind: string, name?: string): Doc => {
  const m = ms.find((m) => m.doc.kind === kind && (name === undefined || (m.doc.metadata as Doc).name === name))
  if (m === undefined) throw new Error(`no ${kind} ${name ?? ''}`)
  return m.doc
}
const podSpec = (ms: readonly Manifest[]): Doc => find(ms, 'Deployment').spec.template.spec
const container = (ms: readonly Manifest[]): Doc => podSpec(ms).containers[0]
const configData = (ms: readonly Manifest[]): Record<string, string> => find(ms, 'ConfigMap').data
/** A copy of the shipped manifests with one change. */
const broken = (change: (ms: Manifest[]) => void): Manifest[] => {
  const copy = structuredClone(manifests) as Manifest[]
  change(copy)
  return copy
}

t.test('the shipped manifests', async (t) => {
  t.same(manifests.map((m) => `${m.file} ${String(m.doc.kind)}`), [
    'configmap.yaml ConfigMap',
    'deployment.yaml Deployment',
    'hpa/hpa.yaml HorizontalPodAutoscaler',
    'metrics-service.yaml Service',
    'network-policy.yaml NetworkPolicy',
    'pdb.yaml PodDisruptionBudget',
    'service.yaml Service',
    'valkey.yaml Deployment',
    'valkey.yaml Service',
    'valkey.yaml NetworkPolicy'
  ])
  t.same(kustomizationProblems(), [], 'kustomization.yaml lists every manifest; hpa/ is a Component it names')
})

t.test('the shared tier\'s Valkey: EDGE_API_REDIS_URL names its Service; nothing persisted, memory bounded, no pod of edge-api\'s', async (t) => {
  const service = find(manifests, 'Service', 'edge-api-valkey')
  const port = service.spec.ports[0].port as number
  t.equal(configData(manifests).EDGE_API_REDIS_URL, `redis://edge-api-valkey:${port}`, 'the ConfigMap points the pods at it')
  const valkey = find(manifests, 'Deployment', 'edge-api-valkey')
  t.same(valkey.spec.template.spec.containers[0].args, ['valkey-server', '--requirepass', '$(VALKEY_PASSWORD)', '--save', '', '--appendonly', 'no', '--maxmemory', '256mb', '--maxmemory-policy', 'allkeys-lru'])
  t.notOk('volumes' in valkey.spec.template.spec, 'no volume: a restart starts empty')
  t.notSame(service.spec.selector, find(manifests, 'Service', 'edge-api').spec.selector, 'edge-api\'s Service does not select it')
})

t.test('the store protected: one password from a Secret for the store and the pods, answers signed, only edge-api pods admitted', async (t) => {
  const secretRef = (env: Doc[], name: string): unknown => env.find((e) => e.name === name)?.valueFrom?.secretKeyRef
  const store = find(manifests, 'Deployment', 'edge-api-valkey').spec.template.spec.containers[0]
  const pods = container(manifests)
  t.same(secretRef(store.env, 'VALKEY_PASSWORD'), { name: 'edge-api-shared', key: 'store-password' }, 'the store\'s requirepass from the Secret')
  t.same(secretRef(pods.env, 'EDGE_API_REDIS_PASSWORD'), { name: 'edge-api-shared', key: 'store-password' }, 'the pods\' password from the same key')
  t.same(secretRef(pods.env, 'EDGE_API_REDIS_SECRET'), { name: 'edge-api-shared', key: 'answers-key' }, 'the answers\' signing key from the Secret')
  t.same([configData(manifests).EDGE_API_REDIS_PASSWORD, configData(manifests).EDGE_API_REDIS_SECRET], ['', ''], 'never in the ConfigMap')
  const policy = find(manifests, 'NetworkPolicy', 'edge-api-valkey')
  const valkeyPods = find(manifests, 'Deployment', 'edge-api-valkey').spec.template.metadata.labels
  t.same(policy.spec.podSelector.matchLabels, valkeyPods, 'the policy covers the store\'s pod')
  t.same(policy.spec.policyTypes, ['Ingress'])
  const edgeApiPods = find(manifests, 'Deployment', 'edge-api').spec.template.metadata.labels
  t.same(policy.spec.ingress, [{ from: [{ podSelector: { matchLabels: edgeApiPods } }], ports: [{ port: 'redis', protocol: 'TCP' }] }],
    'admitting the edge-api pods, on the store\'s port, and nothing else')
})

t.test('the replicas protected: only the Ingress controller reaches their HTTP port, only the monitoring namespace their metrics', async (t) => {
  // EDGE_API_TRUSTED_PROXIES trusts any private address: any other pod reaching the port could name itself any client.
  t.equal(configData(manifests).EDGE_API_TRUSTED_PROXIES, 'uniquelocal')
  const policy = find(manifests, 'NetworkPolicy', 'edge-api')
  t.same(policy.spec.podSelector.matchLabels, find(manifests, 'Deployment', 'edge-api').spec.template.metadata.labels, 'the policy covers the edge-api pods')
  t.same(policy.spec.policyTypes, ['Ingress'], 'every connection in is denied but those listed')
  const portNames = container(manifests).ports.map((p: Doc) => p.name)
  t.same(policy.spec.ingress, [
    { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }], ports: [{ port: 'http', protocol: 'TCP' }] },
    { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: [{ port: 'metrics', protocol: 'TCP' }] }
  ], 'two rules, each one namespace to one port')
  t.same(portNames, ['http', 'metrics'], 'the ports it names are the container\'s')
})

t.test('every document validates against the Kubernetes schemas (kubernetes-models)', async (t) => {
  t.same(await schemaProblems(manifests), [])
})

t.test('no document has a field Kubernetes does not know (kubernetes-models\' interfaces, type-checked)', async (t) => {
  t.same(typeProblems(manifests), [])
})

t.test('the drain contract holds', async (t) => {
  t.same(contractProblems(manifests, imageCommand()), [])
  // The numbers, spelled out: what the checker accepted.
  const data = configData(manifests)
  t.equal(podSpec(manifests).terminationGracePeriodSeconds, 180, '180 s > 5 s announce + 2 m budget')
  t.same([data.EDGE_API_DRAIN_ANNOUNCE, data.EDGE_API_SHUTDOWN_BUDGET], ['5s', '2m'])
  t.match(container(manifests).readinessProbe, { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 1, timeoutSeconds: 3, failureThreshold: 1 })
  t.match(container(manifests).livenessProbe, { httpGet: { path: '/healthz', port: 'http' } })
  t.same(container(manifests).ports.map((p: Doc) => [p.name, p.containerPort]), [['http', Number(data.EDGE_API_PORT)], ['metrics', Number(data.EDGE_API_METRICS_PORT)]])
  t.notOk('command' in container(manifests) || 'args' in container(manifests), 'the image\'s own command runs')
  t.same(imageCommand(), { entrypoint: [], cmd: ['node', 'dist/main.js'] }, 'which is node dist/main.js (Dockerfile)')
  t.same(find(manifests, 'Deployment').spec.strategy.rollingUpdate, { maxSurge: 1, maxUnavailable: 0 })
})

t.test('npm test rejects broken manifests', async (t) => {
  const cases: Array<[string, (ms: Manifest[]) => void, RegExp]> = [
    ['a typo\'d field', (ms) => {
      const c = container(ms)
      c.readinesProbe = c.readinessProbe
      delete c.readinessProbe
    }, /deployment\.yaml Deployment\/edge-api: spec\.template\.spec\.containers\[0\]\.readinesProbe: unknown field "readinesProbe" .*did you mean "readinessProbe"/],
    ['a typo\'d field beside another error', (ms) => {
      podSpec(ms).terminationGracePeriodSecond = 180
      find(ms, 'Deployment').spec.replicas = 'three'
    }, /spec\.template\.spec\.terminationGracePeriodSecond: unknown field/],
    ['a typo in a Service', (ms) => { find(ms, 'Service', 'edge-api').spec.ports[0].tragetPort = 'http' }, /service\.yaml Service\/edge-api: spec\.ports\[0\]\.tragetPort: unknown field/],
    ['a value of the wrong type', (ms) => { find(ms, 'Deployment').spec.replicas = 'three' }, /data\/spec\/replicas must be integer/],
    ['an unknown kind', (ms) => { find(ms, 'PodDisruptionBudget').kind = 'PodDisruptionBudgets' }, /no Kubernetes model for apiVersion policy\/v1, kind PodDisruptionBudgets/],
    ['a grace period below announce + budget', (ms) => { podSpec(ms).terminationGracePeriodSeconds = 120 },
      /terminationGracePeriodSeconds 120 does not exceed EDGE_API_DRAIN_ANNOUNCE 5s \+ EDGE_API_SHUTDOWN_BUDGET 2m \(125s\)/],
    ['a budget raised beyond the grace period', (ms) => { configData(ms).EDGE_API_SHUTDOWN_BUDGET = '3m' }, /terminationGracePeriodSeconds 180 does not exceed .* \(185s\)/],
    ['no grace period (Kubernetes\' 30 s)', (ms) => { delete podSpec(ms).terminationGracePeriodSeconds }, /terminationGracePeriodSeconds 30 does not exceed/],
    ['no drain announcement', (ms) => { configData(ms).EDGE_API_DRAIN_ANNOUNCE = '0' }, /EDGE_API_DRAIN_ANNOUNCE is 0/],
    ['a config edge-api refuses', (ms) => { configData(ms).EDGE_API_DRAIN_ANNOUNCE = '5' }, /would refuse to boot .*EDGE_API_DRAIN_ANNOUNCE="5"/],
    ['a readiness probe on /healthz', (ms) => { container(ms).readinessProbe.httpGet.path = '/healthz' }, /readinessProbe must GET \/readyz on the http port \(it GETs HTTP \/healthz on port http\)/],
    ['a readiness probe on the metrics port', (ms) => { container(ms).readinessProbe.httpGet.port = 'metrics' }, /readinessProbe must GET \/readyz on the http port/],
    ['a readiness probe every 10 s', (ms) => { delete container(ms).readinessProbe.periodSeconds }, /readinessProbe periodSeconds is 10, must be 1/],
    ['a readiness probe with a 1 s timeout', (ms) => { container(ms).readinessProbe.timeoutSeconds = 1 }, /readinessProbe timeoutSeconds is 1, must be 3/],
    ['a readiness probe that tolerates failures', (ms) => { container(ms).readinessProbe.failureThreshold = 3 }, /readinessProbe failureThreshold is 3, must be 1/],
    ['no readiness probe', (ms) => { delete container(ms).readinessProbe }, /no readinessProbe GET \/readyz/],
    ['a liveness probe on /readyz', (ms) => { container(ms).livenessProbe.httpGet.path = '/readyz' }, /livenessProbe must GET \/healthz/],
    ['an impatient liveness probe', (ms) => { container(ms).livenessProbe.failureThreshold = 1 }, /livenessProbe restarts the container after 10s/],
    ['a port that is not EDGE_API_PORT', (ms) => { configData(ms).EDGE_API_PORT = '8080' }, /container port "http" is 18080, EDGE_API_PORT is 8080/],
    ['a metrics port that is not EDGE_API_METRICS_PORT', (ms) => { container(ms).ports[1].containerPort = 9100 }, /container port "metrics" is 9100, EDGE_API_METRICS_PORT is 9464/],
    ['metrics off', (ms) => { configData(ms).EDGE_API_METRICS_PORT = 'off' }, /EDGE_API_METRICS_PORT is off/],
    ['a shell around node', (ms) => { container(ms).command = ['sh', '-c', 'node dist/main.js'] }, /the container runs \["sh","-c","node dist\/main.js"\], not \["node","dist\/main.js"\]/],
    ['npm around node', (ms) => { container(ms).args = ['npm', 'start'] }, /the container runs \["npm","start"\]/],
    ['maxUnavailable above 0', (ms) => { find(ms, 'Deployment').spec.strategy.rollingUpdate.maxUnavailable = 1 }, /maxUnavailable is 1, must be 0/],
    ['the default rollout', (ms) => { delete find(ms, 'Deployment').spec.strategy }, /maxUnavailable is 25% \(the default\)/],
    ['one replica', (ms) => { delete find(ms, 'Deployment').spec.replicas }, /replicas is 1 \(the default\), must be at least 3/],
    ['no spread across nodes', (ms) => { delete podSpec(ms).topologySpreadConstraints }, /not spread across nodes/],
    ['root', (ms) => { podSpec(ms).securityContext.runAsUser = 0 }, /runAsUser is 0/],
    ['a writable root filesystem', (ms) => { container(ms).securityContext.readOnlyRootFilesystem = false }, /readOnlyRootFilesystem is not true/],
    ['privilege escalation', (ms) => { delete container(ms).securityContext.allowPrivilegeEscalation }, /allowPrivilegeEscalation is not false/],
    ['capabilities kept', (ms) => { delete container(ms).securityContext.capabilities }, /capabilities do not drop ALL/],
    ['no memory limit', (ms) => { delete container(ms).resources.limits.memory }, /resources\.limits\.memory is not set/],
    ['service links on', (ms) => { delete podSpec(ms).enableServiceLinks }, /enableServiceLinks must be false/],
    ['metrics through the public Service', (ms) => { find(ms, 'Service', 'edge-api').spec.ports.push({ name: 'metrics', port: 9464, targetPort: 'metrics' }) },
      /service\.yaml Service\/edge-api: carries the metrics port beside the http port/],
    ['draining pods unscraped', (ms) => { delete find(ms, 'Service', 'edge-api-metrics').spec.publishNotReadyAddresses }, /publishNotReadyAddresses must be true/],
    ['a Service that selects nothing', (ms) => { find(ms, 'Service', 'edge-api').spec.selector = { app: 'edge' } }, /service\.yaml Service\/edge-api: its selector does not select/],
    ['a PDB that allows nothing', (ms) => { find(ms, 'PodDisruptionBudget').spec.maxUnavailable = 0 }, /allows no voluntary disruption/],
    ['an HPA aimed elsewhere', (ms) => { find(ms, 'HorizontalPodAutoscaler').spec.scaleTargetRef.name = 'edge' }, /scaleTargetRef is not the edge-api Deployment/],
    ['a ConfigMap that is not there', (ms) => { container(ms).envFrom[0].configMapRef.name = 'edge' }, /envFrom names ConfigMap edge, which is not among the manifests/]
  ]
  // Checked as the originals are (checkManifests is checkEach of one set), all copies at once:
  // one program type-checks them all (issue 54).
  const checked = await checkEach(cases.map(([, change]) => broken(change)))
  for (const [i, [what, , expected]] of cases.entries()) {
    const problems = checked[i] as string[]
    t.match(problems.join('\n'), expected, `${what}: reported (${problems.length} problem${problems.length === 1 ? '' : 's'})`)
  }
})

t.test('YAML is read as kubectl reads it (YAML 1.1): an unquoted off is a boolean, not a string', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'edge-api-kubernetes-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  cpSync(KUBERNETES_DIR, dir, { recursive: true })
  const file = join(dir, 'configmap.yaml')
  writeFileSync(file, readFileSync(file, 'utf8').replace('EDGE_API_EXPOSE_OPTIONAL_ROUTES: "false"', 'EDGE_API_EXPOSE_OPTIONAL_ROUTES: off'))
  const problems = await checkManifests(loadManifests(`${dir}/`))
  t.match(problems.join('\n'), /configmap\.yaml ConfigMap\/edge-api: data\/data\/EDGE_API_EXPOSE_OPTIONAL_ROUTES must be string/)
})

t.test('npm test rejects a broken kustomization', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'edge-api-kustomize-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  cpSync(KUBERNETES_DIR, dir, { recursive: true })
  const root = readFileSync(join(dir, 'kustomization.yaml'), 'utf8')
  writeFileSync(join(dir, 'kustomization.yaml'), root.replace('  - pdb.yaml\n', '  - pdb.yml\n').replace('resources:', 'resource: []\nresources:'))
  t.same(kustomizationProblems(`${dir}/`), [
    'kustomization.yaml: unknown field "resource"',
    'kustomization.yaml: resource pdb.yml does not exist',
    'kustomization.yaml: pdb.yaml is listed 0 times in resources, expected once'
  ])
})

// kubectl renders kustomizations offline. It is an extra, not a requirement: no Debian 12
// package has a kubectl recent enough for components, so a machine without it skips this
// (CI included); the static checks above are what npm test holds the files to.
t.test('kubectl kustomize renders the manifests, and the HPA component when enabled', async (t) => {
  if (spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0) {
    t.comment('!!! SKIPPED: kubectl is not installed; kustomize rendering not checked')
    return
  }
  const render = (dir: string): Doc[] => {
    const run = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', env: cleanEnv(), timeout: 60_000 })
    t.equal(run.status, 0, `kubectl kustomize ${dir}: ${run.stderr}`)
    return parseAllDocuments(run.stdout).map((d) => d.toJS() as Doc)
  }
  const names = (docs: Doc[]): string[] => docs.map((d) => `${String(d.kind)}/${String(d.metadata.name)}`).sort()
  const plain = render(KUBERNETES_DIR)
  const base = manifests.filter((m) => m.doc.kind !== 'HorizontalPodAutoscaler')
  t.same(names(plain), names(base.map((m) => m.doc)), 'every manifest, no HPA')
  t.same(plain.find((d) => d.kind === 'Deployment'), find(manifests, 'Deployment'), 'the Deployment as written')

  // Enabled as kustomization.yaml says: uncomment `components: [hpa]`.
  const dir = mkdtempSync(join(tmpdir(), 'edge-api-kustomize-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  cpSync(KUBERNETES_DIR, dir, { recursive: true })
  const root = readFileSync(join(dir, 'kustomization.yaml'), 'utf8')
  const enabled = root.replace('# components:\n#   - hpa\n', 'components:\n  - hpa\n')
  t.not(enabled, root, 'the commented-out component is there to uncomment')
  writeFileSync(join(dir, 'kustomization.yaml'), enabled)
  const scaled = render(dir)
  t.same(names(scaled), names(manifests.map((m) => m.doc)), 'every manifest and the HPA')
  t.notOk('replicas' in scaled.find((d) => d.kind === 'Deployment')?.spec, 'the HPA owns the replica count')
})
