import t from 'tap'
import { RateLimiter } from '../../src/http/rate-limit.js'
import { LocalRateCounter } from '../../src/http/local-rate-counter.js'
import type { RateCounter, Take } from '../../src/shared/rate-counter.js'
import Fastify from 'fastify'
import { buildTestApp } from '../fixtures/app.js'
import { ManualClock } from '../fixtures/manual-clock.js'

t.test('over EDGE_API_RATE_LIMIT: 429 {"message"} with Retry-After and the draft-10 fields; other clients and the checks unaffected', async (t) => {
  const { app, metrics } = await buildTestApp(t, { env: { EDGE_API_RATE_LIMIT: '3/1m' } })
  const ask = async (url: string, remoteAddress = '198.51.100.7') => await app.inject({ url, remoteAddress })
  for (const remaining of [2, 1, 0]) {
    const res = await ask('/v1/epochs/latest')
    t.equal(res.statusCode, 200)
    t.equal(res.headers['ratelimit-policy'], '"default";q=3;w=60')
    t.match(res.headers.ratelimit, new RegExp(`^"default";r=${remaining};t=(\\d+)$`))
  }
  const refused = await ask('/v1/epochs/latest')
  t.equal(refused.statusCode, 429)
  t.match(refused.json(), { message: /^Too Many Requests: this client is over its limit of 3 requests per 1m/ })
  const retryAfter = Number(refused.headers['retry-after'])
  t.ok(retryAfter >= 19 && retryAfter <= 20, `Retry-After: one more token in 20 s (${retryAfter})`)
  t.equal(refused.headers.ratelimit, `"default";r=0;t=${retryAfter}`)
  t.equal(refused.headers['ratelimit-policy'], '"default";q=3;w=60')
  t.equal((await ask('/v1/epochs/latest', '198.51.100.8')).statusCode, 200, 'another client has its own limit')
  for (const url of ['/healthz', '/readyz']) {
    const res = await ask(url)
    t.equal(res.statusCode, 200, `${url} is never limited`)
    t.notOk(res.headers.ratelimit)
  }
  t.match(await metrics?.registry.metrics(), /edge_api_refusals_total\{reason="rate_limit"\} 1\n/)
})

t.test('with no limit (the default) the same client is never refused and no limit field is sent', async (t) => {
  const { app } = await buildTestApp(t)
  for (let i = 0; i < 5; i++) {
    const res = await app.inject({ url: '/v1/epochs/latest', remoteAddress: '198.51.100.7' })
    t.equal(res.statusCode, 200)
    t.notOk(res.headers.ratelimit)
  }
})

t.test('a pool counter that does not answer: counted here instead, one line when that starts and one when it ends', async (t) => {
  let answering = false
  const pool: RateCounter = { take: async (): Promise<Take | undefined> => answering ? { taken: false, ms: 5000 } : undefined }
  const lines: string[] = []
  const log = { info: (_fields: object, message: string) => lines.push(message), warn: (_fields: object, message: string) => lines.push(message) }
  const limiter = new RateLimiter({ limit: { requests: 2, windowMs: 1000, burst: 2 }, pool, local: new LocalRateCounter(new ManualClock()), log })
  const app = Fastify()
  app.addHook('onRequest', limiter.limit)
  app.get('/v1/x', async () => 'ok')
  t.teardown(() => app.close())
  const codes = []
  for (let i = 0; i < 3; i++) codes.push((await app.inject('/v1/x')).statusCode)
  t.same(codes, [200, 200, 429], 'the local bucket decided')
  t.same(lines, ['rate limit counted by this replica alone: the shared store did not answer in time'])
  answering = true
  t.equal((await app.inject('/v1/x')).statusCode, 429, 'the pool\'s answer')
  t.equal((await app.inject('/v1/x')).headers['retry-after'], '5')
  t.same(lines.slice(1), ['rate limit counted across the pool again'])
})
