import t from 'tap'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { serveMain } from '../fixtures/serve-main.js'

// D12 over a real socket (dist/main.js): the RateLimit fields as draft-ietf-httpapi-ratelimit-headers-10
// says them. At 1365d2e, with 3 requests a minute: r=1 on the first request (one low), and t
// "until the bucket is full" on a success (40 s after two, 60 s after three), "until one more
// token" on a refusal. Draft-10: r the requests left, t the seconds until more quota, alike.

const ROUTE = '/v1/epochs/latest'

t.test('3 requests a minute over a socket: r exactly what is left, t the seconds until one more (20 s), on successes and the refusal alike', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(async () => await sim.close())
  const { origin } = await serveMain(t, [sim], { EDGE_API_RATE_LIMIT: '3/1m' })
  const answers = []
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${origin}${ROUTE}`, { signal: AbortSignal.timeout(30_000) })
    await res.arrayBuffer()
    answers.push({ status: res.status, rateLimit: res.headers.get('ratelimit') ?? '', policy: res.headers.get('ratelimit-policy'), retryAfter: res.headers.get('retry-after') })
  }
  t.same(answers.map((a) => a.status), [200, 200, 200, 429])
  t.same(answers.map((a) => /r=(\d+)/.exec(a.rateLimit)?.[1]), ['2', '1', '0', '0'], 'r: the requests left, exactly')
  const seconds = answers.map((a) => Number(/;t=(\d+)$/.exec(a.rateLimit)?.[1]))
  // One token every 20 s: more quota within 20 s of each answer, whatever was taken before it
  // (the four requests take well under the 5 s slack on a loaded machine).
  t.ok(seconds.every((s) => s >= 15 && s <= 20), `t: the seconds until one more request (${seconds.join(', ')}), never until the bucket is full (40, 60)`)
  t.equal(answers[3]?.retryAfter, String(seconds[3]), 'the refusal\'s Retry-After is its t')
  t.same(new Set(answers.map((a) => a.policy)), new Set(['"default";q=3;w=60']), 'the policy: q=3, w=60 (at least 1)')
})
