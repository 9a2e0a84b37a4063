import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { BOOT_GRACE_MS } from '../../../src/admission/admission.js'
import { buildTestApp } from '../../fixtures/app.js'
import { ScriptedLoop } from '../../fixtures/scripted-loop.js'

const CALM = { delayMs: 0, utilization: 0.2 }

t.test('under pressure, /v1 sheds with 503 + Retry-After while /healthz and /readyz still answer', async (t) => {
  // A heap limit of 1 byte trips on the first sample: the overload is certain, not timed.
  const loop = new ScriptedLoop()
  const { app, sim, logs } = await buildTestApp(t, { loadShedding: { maxHeapUsedBytes: 1, sampleInterval: 5, sampler: loop } })
  await app.ready()
  await sleep(50)
  // Past the boot's grace on the policy's clock.
  loop.feed(CALM, BOOT_GRACE_MS / loop.intervalMs + 1)
  const shed = await app.inject('/v1/status')
  t.equal(shed.statusCode, 503)
  t.equal(shed.headers['retry-after'], '1')
  t.same(shed.json(), { message: 'Service Unavailable' })
  t.equal((await app.inject('/v1/participants')).statusCode, 503)
  t.equal(sim.count('/productscience'), 0, 'a shed request costs the chain nothing')
  t.equal((await app.inject('/healthz')).statusCode, 200)
  t.equal((await app.inject('/readyz')).statusCode, 200)
  t.same(app.shedding.total, { heapUsedBytes: 2 }, 'counted by reason')
  t.notOk(logs.some((l) => l.statusCode === 503 || l.status === 503 || (l.level as number) >= 40), 'no line per shed request, no warning')
})

t.test('readings that cover the boot are not overload: a fresh app does not shed', async (t) => {
  // The heap limit trips at every sample, but the first second after ready is the boot's.
  const loop = new ScriptedLoop()
  const { app } = await buildTestApp(t, { loadShedding: { maxHeapUsedBytes: 1, sampleInterval: 5, sampler: loop } })
  await app.ready()
  await sleep(50)
  loop.feed(CALM, BOOT_GRACE_MS / loop.intervalMs - 1)
  t.equal((await app.inject('/v1/status')).statusCode, 200)
})

t.test('not under pressure, /v1 answers', async (t) => {
  const { app } = await buildTestApp(t)
  t.equal((await app.inject('/v1/status')).statusCode, 200)
})
