import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { request } from 'undici'
import { VERIFY_CONCURRENCY, VERIFY_QUEUE_LIMIT } from '../../../src/routes/v1/verify-work.js'
import { buildTestApp } from '../../fixtures/app.js'
import { LARGE_COMMIT_BLOCK, SIGNED_BASE } from '../../../harness/chain-simulator/data/commits.js'
import { BLOCKS, SETS } from '../../fixtures/verify/route-bodies.js'
import { until } from '../../../harness/wait.js'

// The optional routes' admission and a client leaving, over an app with small limits.
// Verifications run in the worker thread, which starts under the test runner's loader: on a
// loaded machine this file takes longer than tap's default 30 s.
t.setTimeout(180_000)

t.test('the routes\' own admission: beyond the running and queued verifications, 503 at once', async (t) => {
  t.equal(VERIFY_CONCURRENCY, 2)
  t.equal(VERIFY_QUEUE_LIMIT, 16)
  const { app: small, sim: slowSim } = await buildTestApp(t, { env: { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' }, verifyTuning: { concurrency: 1, queueLimit: 1 } })
  slowSim.latency(300, SETS)
  const url = `/v1/debug/verify/${SIGNED_BASE + 2}`
  const running = small.inject(url)
  const queued = small.inject(url)
  await sleep(50)
  const shed = await small.inject(url)
  t.equal(shed.statusCode, 503)
  t.equal(shed.headers['retry-after'], '1')
  t.same(shed.json(), { message: 'too many verifications in progress; retry shortly' })
  t.same(small.shedding.total, { groupQueue: 1 }, 'counted as shed load (edge_api_shed_total{reason="groupQueue"})')
  t.equal((await running).statusCode, 200)
  t.equal((await queued).statusCode, 200, 'the queued one ran when the slot came free')
  t.equal(slowSim.count(BLOCKS), 2, 'the shed one cost the chain nothing')
  t.equal((await small.inject(url)).statusCode, 200, 'and the slots are all back')
})

t.test('a client that leaves while queued gives its slot straight back', async (t) => {
  const { app: small, sim: slowSim, logs: smallLogs } = await buildTestApp(t, { env: { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' }, verifyTuning: { concurrency: 1, queueLimit: 1 } })
  await small.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(small.server.address() as { port: number }).port}`
  slowSim.latency(400, SETS)
  const url = `/v1/debug/verify/${SIGNED_BASE + 2}`
  const running = small.inject(url)
  await sleep(50)
  const controller = new AbortController()
  const leaving = request(`${origin}${url}`, { signal: controller.signal }).catch((err: Error) => err)
  await sleep(50)
  controller.abort()
  t.match(await leaving, { name: 'AbortError' })
  t.equal((await running).statusCode, 200)
  await sleep(50)
  t.ok(smallLogs.some((l) => l.reason === 'client closed the connection while waiting'), 'the queued request was dropped, not run')
  t.equal(slowSim.count(BLOCKS), 1, 'and cost the chain nothing')
  slowSim.clearFaults()
  t.equal((await small.inject(url)).statusCode, 200, 'the slot is free again')
})

t.test('a client that leaves while the chain is read gets no verification done', async (t) => {
  const { app: small, sim: slowSim, logs: smallLogs } = await buildTestApp(t, { env: { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' } })
  await small.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(small.server.address() as { port: number }).port}`
  // The client is gone by the time the validator set arrives.
  slowSim.latency(300, SETS)
  const controller = new AbortController()
  const leaving = request(`${origin}/v1/debug/verify/${LARGE_COMMIT_BLOCK}`, { signal: controller.signal }).catch((err: Error) => err)
  await sleep(100)
  controller.abort()
  t.match(await leaving, { name: 'AbortError' })
  const dropped = (): boolean => smallLogs.some((l) => l.reason === 'client closed the connection before verification')
  await until(dropped, 'the verification dropped, logged as the client\'s doing')
  t.notOk(smallLogs.some((l) => l.level === 50), 'no error logged')
})

t.test('the routes\' queue is fair between clients: with it full of one client\'s, another\'s takes the place of its newest (429)', async (t) => {
  const { app: small, sim: slowSim } = await buildTestApp(t, { env: { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' }, verifyTuning: { concurrency: 1, queueLimit: 2 } })
  slowSim.latency(300, SETS)
  const url = `/v1/debug/verify/${SIGNED_BASE + 2}`
  const heavy = [0, 1, 2].map(async () => small.inject({ url, remoteAddress: '127.0.0.5' }))
  await until(() => slowSim.count(BLOCKS) === 1, 'the heavy client\'s first verification running')
  await sleep(50)
  const polite = await small.inject({ url, remoteAddress: '127.0.0.6' })
  t.equal(polite.statusCode, 200, 'the other client\'s verification was let in and done')
  const statuses = (await Promise.all(heavy)).map((r) => r.statusCode)
  t.same(statuses, [200, 200, 429], 'the heavy client\'s newest made room, refused as its excess')
})
