import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { OtlpReceiver, SERVER } from '../fixtures/otlp-receiver.js'
import { startTracedService } from '../fixtures/traced-service.js'

// Real sockets, a chain simulator and an OTLP receiver per case: slow on a busy machine.
t.setTimeout(180_000)

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
const SAMPLED = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

/** The server spans exported for one request without and one with a sampled traceparent, under `env`. */
async function exported (t: Test, env: Record<string, string>): Promise<string[]> {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const receiver = await OtlpReceiver.http()
  t.teardown(() => receiver.close())
  const { origin, service } = await startTracedService(t, [sim.url], receiver, env)
  await (await fetch(`${origin}/v1/status`)).arrayBuffer()
  await (await fetch(`${origin}/v1/status`, { headers: { traceparent: SAMPLED } })).arrayBuffer()
  t.equal(await service.tracing!.shutdown(5000), true, 'flushed')
  return receiver.spans.filter((s) => s.kind === SERVER).map((s) => s.parentSpanId === '' ? 'root' : 'child')
}

t.test('samplers: OTEL_TRACES_SAMPLER decides for root spans; parentbased ones follow the caller', async (t) => {
  t.same(await exported(t, {}), ['root', 'child'], 'parentbased_always_on (the default, as in Go)')
  t.same(await exported(t, { OTEL_TRACES_SAMPLER: 'always_off' }), [])
  t.same(await exported(t, { OTEL_TRACES_SAMPLER: 'always_on' }), ['root', 'child'])
  t.same(await exported(t, { OTEL_TRACES_SAMPLER: 'parentbased_always_off' }), ['child'])
  t.same(await exported(t, { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }), [], 'ratio 0 ignores the caller')
  t.same(await exported(t, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }), ['child'])
})

t.test('the resource: service.name, the package\'s version, OTEL_RESOURCE_ATTRIBUTES; shutdown runs once', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(() => sim.close())
  const receiver = await OtlpReceiver.http()
  t.teardown(() => receiver.close())
  const { origin, service } = await startTracedService(t, [sim.url], receiver, { OTEL_RESOURCE_ATTRIBUTES: 'k8s.pod.name=edge-api-7', OTEL_SERVICE_NAME: 'edge-eu' })
  await (await fetch(`${origin}/v1/status`)).arrayBuffer()
  const first = service.tracing!.shutdown(5000)
  t.equal(service.tracing!.shutdown(1), first, 'a second call shares the first')
  t.equal(await first, true)
  t.same(receiver.spans[0]?.resource, { 'service.version': VERSION, 'service.name': 'edge-eu', 'k8s.pod.name': 'edge-api-7' })
  await (await fetch(`${origin}/v1/status`)).arrayBuffer()
  t.equal(receiver.spans.length, 1, 'nothing is exported after the shutdown; serving goes on')
})
