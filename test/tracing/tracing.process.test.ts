import { readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { FLUSH_BUDGET_MS, startTracing } from '../../src/tracing/tracing.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { startMain } from '../../harness/main-process.js'
import { OtlpReceiver, SERVER } from '../fixtures/otlp-receiver.js'
import { makeTlsFiles } from '../fixtures/tls-certs.js'

// Each case boots a real child process (TS loader included), slow on a busy machine.
t.setTimeout(300_000)

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

/** Every module src/main.ts loads by static imports (import type and import() excluded), src/ files by path, packages by name. */
function staticImports (file: string, seen = new Set<string>()): Set<string> {
  const text = readFileSync(file, 'utf8')
  for (const [, specifier] of text.matchAll(/^import\s+(?!type\s)(?:[^'"]*?\sfrom\s+)?'([^']+)'/gm)) {
    if (specifier === undefined) continue
    if (!specifier.startsWith('.')) {
      seen.add(specifier)
      continue
    }
    const target = join(dirname(file), specifier.replace(/\.js$/, '.ts'))
    const name = relative(SRC, target)
    if (seen.has(name)) continue
    seen.add(name)
    staticImports(target, seen)
  }
  return seen
}

t.test('with tracing off nothing of OpenTelemetry is loaded: only import() reaches the SDK and the exporters', async (t) => {
  t.equal(await startTracing(undefined, { log: { warn: () => {} } }), undefined, 'off: no tracer')
  const loaded = [...staticImports(join(SRC, 'main.ts'))]
  t.ok(loaded.includes('service.ts') && loaded.includes('tracing/tracing.ts') && loaded.includes('fastify'), 'the walk follows main.ts\'s imports')
  t.same(loaded.filter((m) => /^@opentelemetry\/|^@grpc\//.test(m) || m === 'tracing/provider.ts'), [], 'no OpenTelemetry package, no provider.ts')
})

t.test('at exit the pending spans are flushed after the drain, and the exit code is the drain\'s', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const receiver = await OtlpReceiver.grpc()
  t.teardown(() => receiver.close())
  // Go's settings, unchanged; the 5 s schedule delay means nothing is sent before the exit.
  const main = startMain({ CHAIN_REST_URL: sim.url, EDGE_API_PORT: '0', EDGE_API_HOST: '127.0.0.1', EDGE_API_DRAIN_ANNOUNCE: '0', EDGE_API_OTEL_ENABLED: 'true', OTEL_ENDPOINT: receiver.url, OTEL_HEADERS: 'authorization=Bearer s3cret' })
  t.teardown(() => main.child.kill('SIGKILL'))
  const origin = `http://127.0.0.1:${await main.port()}`
  t.match(main.lines.find((l) => l.msg === 'starting'), { tracing: { endpoint: receiver.url, protocol: 'grpc', headers: 1, sampler: 'parentbased_always_on' } })
  for (const path of ['/readyz', '/v1/versions']) await (await fetch(`${origin}${path}`)).arrayBuffer()
  t.equal(receiver.spans.length, 0, 'nothing exported yet')
  main.child.kill('SIGTERM')
  const { code } = await main.exited
  t.equal(code, 0, 'a clean drain exits 0')
  t.same(receiver.spans.filter((s) => s.kind === SERVER).map((s) => s.name).toSorted(), ['GET /readyz', 'GET /v1/versions'], 'the spans arrived at exit')
  const steps = main.lines.map((l) => l.msg)
  t.ok(steps.indexOf('drained') < steps.indexOf('traces flushed') && steps.indexOf('traces flushed') < steps.indexOf('exit'), 'drained, then flushed, then exit')
  t.match(main.lines.find((l) => l.msg === 'traces flushed'), { queued: Number, flushMs: Number })
  t.notOk(JSON.stringify(main.lines).includes('s3cret'), 'the header value is never logged')
})

t.test('a collector that never answers delays a forced exit by the flush budget at most; the exit code stays the drain\'s', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const receiver = await OtlpReceiver.http()
  t.teardown(() => receiver.close())
  receiver.mode = 'hang'
  const main = startMain({
    CHAIN_REST_URL: sim.url,
    EDGE_API_PORT: '0',
    EDGE_API_HOST: '127.0.0.1',
    EDGE_API_DRAIN_ANNOUNCE: '0',
    EDGE_API_SHUTDOWN_BUDGET: '500ms',
    EDGE_API_OTEL_ENABLED: 'true',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url.replace('/v1/traces', ''),
    OTEL_BSP_SCHEDULE_DELAY: '10'
  })
  t.teardown(() => main.child.kill('SIGKILL'))
  const origin = `http://127.0.0.1:${await main.port()}`
  await (await fetch(`${origin}/readyz`)).arrayBuffer()
  // A request the drain cannot finish: the chain never answers it.
  sim.hang('/productscience')
  const stuck = fetch(`${origin}/v1/models`).catch(() => undefined)
  const { until } = await import('../../harness/wait.js')
  await until(() => sim.count('/productscience') > 0 && receiver.requests > 0, 'the stuck request and an export in flight')
  main.child.kill('SIGTERM')
  const signalled = performance.now()
  const { code, at } = await main.exited
  await stuck
  t.equal(code, 1, 'the forced drain exits 1')
  const incomplete = main.lines.find((l) => l.msg === 'trace flush incomplete: pending spans dropped')
  t.match(incomplete, { level: 40, budget: '5s', flushMs: Number })
  t.ok((incomplete?.flushMs as number) >= FLUSH_BUDGET_MS - 50 && (incomplete?.flushMs as number) < FLUSH_BUDGET_MS + 2000, `the flush gave up at its budget (${String(incomplete?.flushMs)} ms)`)
  t.ok(at - signalled < 500 + FLUSH_BUDGET_MS + 5000, `exited ${Math.round(at - signalled)} ms after SIGTERM`)
  t.match(main.lines.at(-1), { msg: 'exit', code: 1 })
})

t.test('the service exports gzipped over mTLS with the OTLP certificate variables, and refuses to boot on a certificate file it cannot read', async (t) => {
  const files = makeTlsFiles()
  t.teardown(() => files.remove())
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const receiver = await OtlpReceiver.http({ tls: files, clientCertificate: true })
  t.teardown(() => receiver.close())
  const tracing = {
    EDGE_API_OTEL_ENABLED: 'true',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
    OTEL_EXPORTER_OTLP_CERTIFICATE: files.caCert,
    OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: files.clientCert,
    OTEL_EXPORTER_OTLP_CLIENT_KEY: files.clientKey
  }
  const main = startMain({ CHAIN_REST_URL: sim.url, EDGE_API_PORT: '0', EDGE_API_HOST: '127.0.0.1', EDGE_API_DRAIN_ANNOUNCE: '0', ...tracing })
  t.teardown(() => main.child.kill('SIGKILL'))
  await (await fetch(`http://127.0.0.1:${await main.port()}/v1/versions`)).arrayBuffer()
  main.child.kill('SIGTERM')
  t.equal((await main.exited).code, 0)
  t.match(receiver.spans.filter((s) => s.kind === SERVER), [{ name: 'GET /v1/versions' }], 'the span arrived at exit')
  t.match(receiver.headers, [{ 'content-encoding': 'gzip' }], 'gzipped')
  t.same(receiver.clients, ['edge-api-client'], 'with our client certificate')

  const refused = startMain({ CHAIN_REST_URL: sim.url, ...tracing, OTEL_EXPORTER_OTLP_CERTIFICATE: `${files.dir}/missing.pem` })
  t.equal((await refused.exited).code, 1, 'exit 1')
  t.match(refused.lines, [{ level: 60, variable: 'OTEL_EXPORTER_OTLP_CERTIFICATE', msg: /^OTEL_EXPORTER_OTLP_CERTIFICATE=".*missing\.pem" is invalid: must be a readable file/ }])
})
