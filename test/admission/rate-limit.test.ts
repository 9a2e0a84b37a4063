import t, { type Test } from 'tap'
import type { RateLimit } from '../../src/edge-settings.js'
import { Admission } from '../../src/admission/admit.js'
import { POOL_AGAIN_MS, RateLimiter } from '../../src/admission/rate-limit.js'
import { Shedding } from '../../src/admission/shedding.js'
import { LocalRateCounter } from '../../src/admission/local-rate-counter.js'
import type { RateCounter, Take } from '../../src/shared/rate-counter.js'
import Fastify from 'fastify'
import { buildTestApp } from '../fixtures/app.js'
import { ManualClock } from '../fixtures/manual-clock.js'

t.test('over EDGE_API_RATE_LIMIT: 429 {"message"} with Retry-After and the draft-10 fields; other clients and the checks unaffected', async (t) => {
  const { app, metrics } = await buildTestApp(t, { env: { EDGE_API_RATE_LIMIT: '3/1m' } })
  const ask = async (url: string, remoteAddress = '198.51.100.7') => await app.inject({ url, remoteAddress })
  const start = Date.now()
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
  // This app runs on the real clock: the bucket refills while the four requests are answered,
  // which on a loaded machine took seconds (Retry-After 18 seen at a load of 12). The bound
  // allows what elapsed; the exact figures are the manual-clock tests' below.
  const elapsed = Math.ceil((Date.now() - start) / 1000)
  t.ok(retryAfter >= 19 - elapsed && retryAfter <= 20, `Retry-After: one more token in 20 s less the ${elapsed} s elapsed (${retryAfter})`)
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

/** A limiter on a manual clock in a bare app, its log lines kept. */
function limited (t: Test, limit: RateLimit, pool?: RateCounter) {
  const clock = new ManualClock()
  const lines: Array<{ level: string, message: string, fields: object }> = []
  const log = { info: (fields: object, message: string) => lines.push({ level: 'info', message, fields }), warn: (fields: object, message: string) => lines.push({ level: 'warn', message, fields }) }
  const limiter = new RateLimiter({ limit, pool, local: new LocalRateCounter(clock), log, clock })
  const app = Fastify()
  // Through admission's one hook, as the app asks it (src/admission/admit.ts).
  Admission.register(app, { shedding: new Shedding(log), limiter })
  app.get('/v1/x', async () => 'ok')
  t.teardown(() => app.close())
  const ask = async () => {
    const res = await app.inject('/v1/x')
    return { status: res.statusCode, rateLimit: res.headers.ratelimit, retryAfter: res.headers['retry-after'], policy: res.headers['ratelimit-policy'] }
  }
  return { clock, lines, ask }
}

t.test('draft-10\'s fields: r the tokens left, exactly; t the seconds until one more, on a success and a refusal alike', async (t) => {
  const { ask } = limited(t, { requests: 3, windowMs: 1000, burst: 3 })
  t.same(await ask(), { status: 200, rateLimit: '"default";r=2;t=1', retryAfter: undefined, policy: '"default";q=3;w=1' }, '3/1s, the first request: two left (it said 1)')
  t.same((await ask()).rateLimit, '"default";r=1;t=1')
  t.same((await ask()).rateLimit, '"default";r=0;t=1')
  t.same(await ask(), { status: 429, rateLimit: '"default";r=0;t=1', retryAfter: '1', policy: '"default";q=3;w=1' })
  const minute = limited(t, { requests: 600, windowMs: 60_000, burst: 600 })
  for (let i = 0; i < 299; i++) await minute.ask()
  // It said r=306;t=30: t the seconds until the bucket was full, not until more quota.
  t.same((await minute.ask()).rateLimit, '"default";r=300;t=1', '600/1m after 300 requests: 300 left, the next token within a second')
  await minute.clock.advance(20_000)
  t.same((await minute.ask()).rateLimit, '"default";r=499;t=1', '20 s later: 200 tokens more, one taken')
})

t.test('RateLimit-Policy\'s w is at least one second: a bucket that fills faster is said as its requests a second', async (t) => {
  t.equal((await limited(t, { requests: 600, windowMs: 60_000, burst: 1 }).ask()).policy, '"default";q=10;w=1', '600/1m burst=1 (it said w=0)')
  t.equal((await limited(t, { requests: 10, windowMs: 60_000, burst: 600 }).ask()).policy, '"default";q=600;w=3600', 'the Go front\'s 10/1m burst=600: an hour to fill')
})

t.test('a pool counter that does not answer: counted here instead, one line when that starts and one once the pool has answered every count for POOL_AGAIN_MS', async (t) => {
  let answering = false
  const pool: RateCounter = { take: async (): Promise<Take | undefined> => answering ? { taken: false, remaining: 0, moreMs: 5000 } : undefined }
  const { clock, lines, ask } = limited(t, { requests: 2, windowMs: 1000, burst: 2 }, pool)
  const codes = []
  for (let i = 0; i < 3; i++) codes.push((await ask()).status)
  t.same(codes, [200, 200, 429], 'the local bucket decided')
  t.match(lines, [{ level: 'warn', message: 'rate limit counted by this replica alone: the shared store did not answer in time' }])
  answering = true
  t.same(await ask(), { status: 429, rateLimit: '"default";r=0;t=5', retryAfter: '5', policy: '"default";q=2;w=1' }, 'the pool\'s answer')
  // The store hovering at its deadline: answers and misses alternate, a second apart.
  for (let i = 0; i < 20; i++) {
    answering = i % 2 === 0
    await ask()
    await clock.advance(1000)
  }
  t.equal(lines.length, 1, 'twenty switches, no line more (it was a warn/info pair per switch)')
  answering = true
  await ask()
  await clock.advance(POOL_AGAIN_MS - 1)
  await ask()
  t.equal(lines.length, 1, 'answering for less than POOL_AGAIN_MS: still counted alone as far as the log says')
  await clock.advance(1)
  await ask()
  t.match(lines.slice(1), [{ level: 'info', message: 'rate limit counted across the pool again', fields: { countedAlone: 13 } }], 'one line, with the counts made alone meanwhile')
  answering = false
  await ask()
  t.equal(lines.length, 3, 'a miss after that is a change again: its line')
})

t.test('an event stream over the limit, over a real socket: 200 text/event-stream with the wait as its retry:, ended (an EventSource comes back; a 429 ends it for good)', async (t) => {
  const { app } = await buildTestApp(t, { env: { EDGE_API_RATE_LIMIT: '1/1m' } })
  const origin = await app.listen({ host: '127.0.0.1', port: 0 })
  const first = await fetch(`${origin}/v1/epochs/latest`)
  await first.arrayBuffer()
  t.equal(first.status, 200, 'the client\'s one request')
  const refused = await fetch(`${origin}/v1/events`, { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(10_000) })
  t.equal(refused.status, 200)
  t.match(refused.headers.get('content-type'), /^text\/event-stream/)
  const retryAfter = Number(refused.headers.get('retry-after'))
  t.ok(retryAfter >= 59 && retryAfter <= 60, `Retry-After: one more token in 60 s (${retryAfter})`)
  t.match(refused.headers.get('ratelimit'), /^"default";r=0;t=\d+$/)
  t.equal(await refused.text(), `: Too Many Requests: this client is over its limit of 1 requests per 1m\nretry: ${retryAfter * 1000}\n\n`, 'why, the retry:, then its end')
  const plain = await fetch(`${origin}/v1/epochs/latest`)
  t.equal(plain.status, 429, 'a plain read is refused as before')
})
