import t, { type Test } from 'tap'
import { readTracingSettings, TRACING_VARIABLES } from '../../src/tracing/settings.js'
import { refusal as configRefusal } from '../fixtures/config-refusal.js'
import { makeTlsFiles } from '../fixtures/tls-certs.js'

const on = { EDGE_API_OTEL_ENABLED: 'true' }
const grpc = { ...on, OTEL_ENDPOINT: 'http://jaeger:4317' }

function read (env: Record<string, string>) {
  return readTracingSettings(env, [])
}

const refusal = (t: Test, env: Record<string, string>, variable: string, message: RegExp): void => configRefusal(t, env, variable, message, read)

t.test('off by default; EDGE_API_OTEL_ENABLED takes Go\'s boolean values; the other variables are not read when off', async (t) => {
  t.equal(read({}), undefined)
  t.equal(read({ EDGE_API_OTEL_ENABLED: '' }), undefined)
  for (const value of ['0', 'f', 'F', 'FALSE', 'false', 'False']) t.equal(read({ EDGE_API_OTEL_ENABLED: value, OTEL_ENDPOINT: 'x' }), undefined, `${value} is off`)
  for (const value of ['1', 't', 'T', 'TRUE', 'true', 'True', ' true ']) t.ok(read({ EDGE_API_OTEL_ENABLED: value, OTEL_ENDPOINT: 'http://jaeger:4317' }), `${value} is on`)
  t.equal(read({ OTEL_TRACES_SAMPLER: 'nonsense', OTEL_ENDPOINT: 'not a url' }), undefined, 'junk in OTEL_* does not matter while off')
  refusal(t, { EDGE_API_OTEL_ENABLED: 'yes' }, 'EDGE_API_OTEL_ENABLED', /^EDGE_API_OTEL_ENABLED="yes" is invalid: must be true or false/)
})

t.test('OTEL_SDK_DISABLED=true wins, with a warning', async (t) => {
  const warnings: string[] = []
  t.equal(readTracingSettings({ ...grpc, OTEL_SDK_DISABLED: 'TRUE' }, warnings), undefined)
  t.same(warnings, ['tracing is off: OTEL_SDK_DISABLED=true overrides EDGE_API_OTEL_ENABLED'])
  const quiet: string[] = []
  t.equal(readTracingSettings({ OTEL_SDK_DISABLED: 'true' }, quiet), undefined)
  t.same(quiet, [], 'no warning when tracing was off anyway')
  t.ok(read({ ...grpc, OTEL_SDK_DISABLED: 'false' }))
  refusal(t, { ...grpc, OTEL_SDK_DISABLED: 'nope' }, 'OTEL_SDK_DISABLED', /must be true or false/)
})

t.test('Go\'s OTEL_ENDPOINT and OTEL_HEADERS work unchanged: OTLP/gRPC, with the Go defaults', async (t) => {
  t.same(read({ ...grpc, OTEL_HEADERS: ' authorization = Bearer abc=def , x-b=2' }), {
    endpoint: 'http://jaeger:4317',
    protocol: 'grpc',
    headers: { authorization: 'Bearer abc=def', 'x-b': '2' },
    exportTimeoutMs: 10_000,
    compression: 'none',
    tls: { ca: undefined, cert: undefined, key: undefined },
    resource: { 'service.name': 'edge-api' },
    sampler: 'parentbased_always_on',
    samplerRatio: 1,
    batch: { scheduleDelayMs: 5000, maxQueueSize: 2048, maxExportBatchSize: 512, exportTimeoutMs: 30_000 }
  })
  t.equal(read({ ...on, OTEL_ENDPOINT: 'https://collector.example:4317/ignored/path' })?.endpoint, 'https://collector.example:4317', 'gRPC reaches the origin; TLS for https')
  t.equal(read({ ...grpc, OTEL_HEADERS: 'k=a%20b' })?.headers.k, 'a%20b', 'OTEL_HEADERS is not percent-decoded (as in Go)')
  t.match(read({ ...grpc, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }), { endpoint: 'http://jaeger:4317/v1/traces', protocol: 'http/protobuf' }, 'a protocol variable may say otherwise')
  for (const endpoint of ['ftp://jaeger:4317', 'http://u:p@jaeger:4317', 'http://jaeger:4317?x=1', '::']) {
    refusal(t, { ...on, OTEL_ENDPOINT: endpoint }, 'OTEL_ENDPOINT', /is invalid: must be an http:\/\/ or https:\/\/ URL/)
  }
})

t.test('the standard endpoints: http/protobuf by default, the traces one as it is, the base one plus v1/traces', async (t) => {
  t.match(read({ ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), { endpoint: 'http://collector:4318/v1/traces', protocol: 'http/protobuf' })
  t.match(read({ ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/base/' }), { endpoint: 'http://collector:4318/base/v1/traces' })
  t.match(read({ ...on, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://other:4318' }), { endpoint: 'http://collector:4318/custom', protocol: 'http/protobuf' })
  t.match(read({ ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), { endpoint: 'http://collector:4317', protocol: 'grpc' })
  t.match(read({ ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }), { protocol: 'grpc' }, 'the traces protocol wins')
  t.match(read({ ...grpc, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://other:4318' }), { endpoint: 'http://jaeger:4317', protocol: 'grpc' }, 'Go\'s OTEL_ENDPOINT comes first')
  refusal(t, { ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, 'OTEL_EXPORTER_OTLP_PROTOCOL', /must be grpc or http\/protobuf \(http\/json is not supported\)/)
  refusal(t, { ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'udp' }, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', /must be grpc or http\/protobuf/)
  refusal(t, { ...on, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', /must be an http/)
  refusal(t, on, 'OTEL_ENDPOINT', /^EDGE_API_OTEL_ENABLED is true but no endpoint is set: set OTEL_ENDPOINT .* or OTEL_EXPORTER_OTLP_ENDPOINT/)
})

t.test('headers: Go\'s over the traces ones over the general ones; malformed ones refused without their values', async (t) => {
  t.same(read({ ...grpc, OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=1,c=x%2Cy', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'b=2', OTEL_HEADERS: 'a=3' })?.headers, { a: '3', b: '2', c: 'x,y' }, 'the standard ones are percent-decoded')
  const cases: Array<[string, string, RegExp]> = [
    ['OTEL_HEADERS', 'authorization', /pair 1 has no "="/],
    ['OTEL_HEADERS', 'a=1,=secret', /pair 2 has no key/],
    ['OTEL_HEADERS', 'authorization=', /authorization has no value/],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'authorization=%E0%A4%A', /the value of authorization is not/],
    ['OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'x', /pair 1 has no "="/]
  ]
  for (const [variable, value, message] of cases) {
    refusal(t, { ...grpc, [variable]: value }, variable, message)
    try {
      read({ ...grpc, [variable]: value.replace('secret', 'Bearer-xyz') })
    } catch (err) {
      t.notOk((err as Error).message.includes('Bearer-xyz') || (err as Error).message.includes('%E0'), 'the message shows no value')
    }
  }
})

t.test('the resource: OTEL_SERVICE_NAME over service.name in OTEL_RESOURCE_ATTRIBUTES over edge-api', async (t) => {
  t.same(read({ ...grpc, OTEL_RESOURCE_ATTRIBUTES: 'k8s.pod.name=edge-api-1,deployment.environment=prod%20eu' })?.resource,
    { 'service.name': 'edge-api', 'k8s.pod.name': 'edge-api-1', 'deployment.environment': 'prod eu' })
  t.same(read({ ...grpc, OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes' })?.resource, { 'service.name': 'from-attributes' })
  t.same(read({ ...grpc, OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes', OTEL_SERVICE_NAME: 'edge-eu' })?.resource, { 'service.name': 'edge-eu' })
  refusal(t, { ...grpc, OTEL_RESOURCE_ATTRIBUTES: 'k8s.pod.name' }, 'OTEL_RESOURCE_ATTRIBUTES', /^OTEL_RESOURCE_ATTRIBUTES="k8s.pod.name" is invalid: must be key=value pairs separated by commas; pair 1 has no "="/)
})

t.test('the sampler and its ratio', async (t) => {
  for (const sampler of ['always_on', 'always_off', 'parentbased_always_off']) t.equal(read({ ...grpc, OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: 'ignored' })?.sampler, sampler, `${sampler}; the argument is not read`)
  t.match(read({ ...grpc, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }), { sampler: 'parentbased_traceidratio', samplerRatio: 0.25 })
  t.match(read({ ...grpc, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '.5' }), { samplerRatio: 0.5 })
  t.match(read({ ...grpc, OTEL_TRACES_SAMPLER: 'traceidratio' }), { samplerRatio: 1 }, 'the spec\'s default ratio')
  refusal(t, { ...grpc, OTEL_TRACES_SAMPLER: 'jaeger_remote' }, 'OTEL_TRACES_SAMPLER', /must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio/)
  for (const arg of ['1.5', '-0.1', 'half', '1e-1']) refusal(t, { ...grpc, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: arg }, 'OTEL_TRACES_SAMPLER_ARG', /must be a number from 0 to 1/)
})

t.test('timeouts and the batch processor', async (t) => {
  t.match(read({ ...grpc, OTEL_EXPORTER_OTLP_TIMEOUT: '2000' }), { exportTimeoutMs: 2000 })
  t.match(read({ ...grpc, OTEL_EXPORTER_OTLP_TIMEOUT: '2000', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '3000' }), { exportTimeoutMs: 3000 })
  t.same(read({ ...grpc, OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '100', OTEL_BSP_EXPORT_TIMEOUT: '1000' })?.batch,
    { scheduleDelayMs: 100, maxQueueSize: 100, maxExportBatchSize: 100, exportTimeoutMs: 1000 })
  refusal(t, { ...grpc, OTEL_BSP_MAX_QUEUE_SIZE: '100' }, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', /must not exceed OTEL_BSP_MAX_QUEUE_SIZE \(100\)/)
  for (const key of ['OTEL_BSP_SCHEDULE_DELAY', 'OTEL_BSP_MAX_QUEUE_SIZE', 'OTEL_BSP_EXPORT_TIMEOUT', 'OTEL_EXPORTER_OTLP_TIMEOUT', 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT']) {
    for (const value of ['0', '5s', '-1', '99999999999999999999']) refusal(t, { ...grpc, [key]: value }, key, /must be an integer of at least 1/)
  }
})

t.test('a gRPC endpoint without a scheme: TLS unless OTEL_EXPORTER_OTLP_(TRACES_)INSECURE is true; a scheme decides by itself', async (t) => {
  t.equal(read({ ...on, OTEL_ENDPOINT: 'jaeger:4317' })?.endpoint, 'https://jaeger:4317', 'the spec\'s default: secure')
  t.equal(read({ ...on, OTEL_ENDPOINT: 'jaeger:4317', OTEL_EXPORTER_OTLP_INSECURE: 'TRUE' })?.endpoint, 'http://jaeger:4317')
  t.equal(read({ ...on, OTEL_ENDPOINT: 'jaeger:4317', OTEL_EXPORTER_OTLP_INSECURE: 'true', OTEL_EXPORTER_OTLP_TRACES_INSECURE: 'false' })?.endpoint, 'https://jaeger:4317', 'the traces variable wins')
  t.equal(read({ ...on, OTEL_ENDPOINT: 'https://jaeger:4317', OTEL_EXPORTER_OTLP_INSECURE: 'true' })?.endpoint, 'https://jaeger:4317', 'https:// stays TLS')
  refusal(t, { ...on, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT', /must be an http:\/\/ or https:\/\/ URL/)
  for (const key of ['OTEL_EXPORTER_OTLP_INSECURE', 'OTEL_EXPORTER_OTLP_TRACES_INSECURE']) refusal(t, { ...grpc, [key]: 'yes' }, key, /must be true or false/)
})

t.test('TLS files with a plaintext endpoint are not used, with a warning naming them', async (t) => {
  const warnings: string[] = []
  const files = makeTlsFiles()
  t.teardown(() => files.remove())
  const caFile = files.caCert
  const settings = readTracingSettings({ ...grpc, OTEL_EXPORTER_OTLP_CERTIFICATE: caFile }, warnings)
  t.ok(settings?.tls.ca, 'read all the same')
  t.same(warnings, ['OTEL_EXPORTER_OTLP_CERTIFICATE not used: the OTLP endpoint http://jaeger:4317 is plaintext (https:// is TLS)'])
  const quiet: string[] = []
  readTracingSettings({ ...on, OTEL_ENDPOINT: 'https://jaeger:4317', OTEL_EXPORTER_OTLP_CERTIFICATE: caFile }, quiet)
  t.same(quiet, [], 'https://: no warning')
})

t.test('every variable read is listed', async (t) => {
  t.equal(new Set(TRACING_VARIABLES).size, TRACING_VARIABLES.length)
  t.ok(TRACING_VARIABLES.every((v) => v.startsWith('OTEL_')))
})
