import t from 'tap'
import { ANSWER_LIE } from '../../src/proven/proven-answers.js'
import { until } from '../../harness/wait.js'
import { redisFor } from '../fixtures/redis.js'
import { provingChain, type Read } from '../fixtures/proven/proven-replica.js'

// Proven answers over real sockets (docs/verified-reads.md, "The modes"): replicas in each
// mode over three nodes of one signed simulated chain, some of which lie
// (harness/chain-simulator/lies.ts: forgedAnswers, REST answers with changed numbers and the
// true proofs; forgedValue, a changed value with the true value's proof). Every body served
// is compared with the honest node's answer at its height.

const { clock, honestAt, replica } = await provingChain(t)
t.teardown(() => { clock.stop() })

/** The proven routes, as a client asks them; participants serve a list no proof covers (range). */
const PROVEN = ['/v1/epochs/latest', '/v1/models', '/v1/pricing', '/v1/epochs/current/participants', '/v1/epochs/42/participants']
const VERIFIED = /^verified; keys=\d+$/
const expectedVerification = (path: string): RegExp => path.includes('participants') ? /^unverified; reason="range"$/ : VERIFIED
/** `created` is the request's time (the Go service's), not chain state. */
const comparable = (body: string): string => body.replace(/"created":\d+/g, '"created":0')

const answers = await replica('answers')
const [liar] = answers.nodes as [typeof answers.nodes[0]]
liar.lies.forgedAnswers = true
await answers.verified()
/** Waits (bounded, named) until V is the head - 2 with the clock stopped: nothing moves under a test that compares two reads. */
const caughtUp = async (): Promise<void> => until(() => answers.service.chain.verified?.height === clock.height - 2, 'V caught up with the head', { timeoutMs: 30_000, intervalMs: 20 })

t.test('answers, one liar of three (first in rotation): verified answers at V, the liar out of rotation at its first answer, one error line, the metric', async (t) => {
  await caughtUp()
  const first = await answers.read('/v1/epochs/latest')
  t.equal(first.status, 200)
  t.match(first.verification, VERIFIED)
  t.equal(first.height, answers.service.chain.verified?.height, 'read at V, not at the head')
  t.equal(JSON.parse(first.body).block_height, first.height)
  t.equal(await answers.lying(0), 1, 'the liar is out of rotation before another block lands')
  t.equal(await answers.lying(1), 0)
  const lines = answers.logs.filter((line) => line.msg === ANSWER_LIE)
  t.equal(lines.length, 1, 'one error line')
  t.match(lines[0], { level: 50, node: liar.url, height: String(first.height), reason: /^the answer disagrees with its proofs at \/epoch_params\/epoch_length/ })
  const hit = await answers.read('/v1/epochs/latest')
  t.same([hit.cache, hit.verification, hit.height, hit.body], ['hit', first.verification, first.height, first.body], 'a hit says what its miss said')
})

t.test('answers, one liar of three: 10,000 reads of the proven routes across blocks, 0 failed, 0 forged', async (t) => {
  const reads: Read[] = []
  const paths = [...Array(10_000).keys()].map((i) => PROVEN[i % PROVEN.length] as string)
  // A block every 100 reads, the head poll every 100 ms: V moves many times during the run, so
  // most reads are hits and a few hundred are misses at new heights. Blocks land by reads, not
  // by the wall clock: with a block every 50 ms, a starved run (six test files on two cores)
  // met more blocks per read, so more misses to prove, and took 238 s against 16-24 s alone.
  let done = 0
  await Promise.all([...Array(16).keys()].map(async () => {
    for (let path = paths.pop(); path !== undefined; path = paths.pop()) {
      reads.push(await answers.read(path))
      if (++done % 100 === 0) clock.advance()
    }
  }))
  const failed = reads.filter((read) => read.status !== 200)
  t.same(failed.slice(0, 3), [], `0 failed of ${reads.length}`)
  t.same(reads.filter((read) => !expectedVerification(read.path).test(read.verification ?? '')).slice(0, 3), [], 'every answer says what it is')
  const misses = reads.filter((read) => read.cache === 'miss')
  const heights = new Set(reads.map((read) => read.height))
  t.ok(misses.length >= 20 && heights.size >= 5, `misses at many heights (${misses.length} misses, ${heights.size} heights)`)
  // Every distinct answer served, against the honest one at its height (rising heights).
  const served = new Map<string, Read>()
  for (const read of reads) served.set(`${String(read.height).padStart(12, '0')} ${read.path} ${comparable(read.body)}`, read)
  let forged = 0
  for (const key of [...served.keys()].sort()) {
    const read = served.get(key) as Read
    if (comparable(await honestAt(read.path, read.height as number)) !== comparable(read.body)) forged++
  }
  t.equal(forged, 0, `0 forged among ${served.size} distinct answers`)
  t.equal(answers.logs.filter((line) => line.msg === ANSWER_LIE).length, 1, 'still one error line')
})

t.test('answers: a route that is not proven is marked; a client\'s minimum above V is read at the head, not-yet', async (t) => {
  const participants = await answers.read('/v1/participants')
  t.same([participants.status, participants.verification], [200, 'unverified; reason="route"'])
  const V = answers.service.chain.verified?.height as number
  const res = await fetch(`http://127.0.0.1:${answers.service.port}/v1/epochs/latest`, { headers: { 'x-min-block-height': String(V + 1) }, signal: AbortSignal.timeout(30_000) })
  t.equal(res.status, 200)
  t.equal(res.headers.get('x-verification'), 'unverified; reason="not-yet"')
  t.ok(Number(res.headers.get('x-block-height')) > V, 'at the minimum or above, as asked')
})

t.test('answers: a long-poll on a proven route waits until V passes the height it saw', async (t) => {
  await caughtUp()
  const url = `http://127.0.0.1:${answers.service.port}/v1/epochs/latest`
  const first = await fetch(url, { signal: AbortSignal.timeout(30_000) })
  const seen = Number(first.headers.get('x-block-height'))
  t.equal(seen, answers.service.chain.verified?.height, 'at V')
  const held = fetch(url, { headers: { 'if-none-match': first.headers.get('etag') as string, prefer: 'wait=20' }, signal: AbortSignal.timeout(30_000) })
  // Without a new block there is nothing newer to answer: still held (an answer at once, a 304 at V, is what a client would loop on).
  const early = await Promise.race([held.then(() => 'answered'), new Promise((resolve) => setTimeout(() => { resolve('held') }, 500))])
  t.equal(early, 'held', 'held while V has not passed what it saw')
  clock.advance()
  const res = await held
  t.equal(res.status, 200, `answered ${res.status} at ${String(res.headers.get('x-block-height'))}, V ${String(answers.service.chain.verified?.height)}, seen ${seen}`)
  t.ok(Number(res.headers.get('x-block-height')) > seen, 'the answer at the new V')
  t.match(res.headers.get('x-verification'), VERIFIED)
})

t.test('answers: a node whose read fails is passed over (not named a liar); a client\'s 404 is the answer', async (t) => {
  clock.advance()
  await caughtUp()
  const [, first, second] = answers.nodes as [unknown, typeof liar, typeof liar]
  const EPOCH_INFO = '/productscience/inference/inference/epoch_info'
  first.fail(EPOCH_INFO, 14, 'unavailable', 503)
  const [before, asked] = [second.count(EPOCH_INFO), first.count(EPOCH_INFO)]
  const read = await answers.read('/v1/epochs/latest')
  t.same([read.status, read.cache, read.verification?.startsWith('verified')], [200, 'miss', true], 'the next node answered, proven')
  t.same([first.count(EPOCH_INFO) - asked, second.count(EPOCH_INFO) - before], [1, 1], 'the second node failed, the third answered')
  t.equal(await answers.lying(1), 0, 'a node that failed is not a liar')
  first.clearFaults()
  // Its probe finds it back (the first after 250 ms): bounded well above that on a loaded machine.
  await until(() => answers.service.chain.nodesUp[1] === true, 'the node that failed back up', { timeoutMs: 20_000, intervalMs: 20 })
  const missing = await answers.read('/v1/epochs/99999/participants')
  t.equal(missing.status, 404)
})

t.test('answers, every node lying: never a forged body, 503 failed', async (t) => {
  clock.advance()
  for (const node of answers.nodes) node.lies.forgedAnswers = true
  // V at a height not read before: every read below is a miss, every node asked.
  await caughtUp()
  for (const path of ['/v1/epochs/latest', '/v1/models', '/v1/pricing']) {
    // A height not read before: a miss, every node asked.
    const read = await answers.read(path)
    t.same([read.status, read.verification], [503, 'failed'], path)
    t.match(JSON.parse(read.body), { message: /^no chain node gave an answer that verifies: the answer disagrees with its proofs at / })
  }
  t.same([await answers.lying(0), await answers.lying(1), await answers.lying(2)], [1, 1, 1], 'each liar out of rotation')
  t.equal(answers.logs.filter((line) => line.msg === ANSWER_LIE).length, 3, 'one line per liar')
  for (const node of answers.nodes) node.lies.forgedAnswers = false
})

t.test('strict: every node lying is a 503 with the reason, never a forged body; a route that is not proven is a 503', async (t) => {
  const strict = await replica('strict')
  await strict.verified()
  const honest = await strict.read('/v1/epochs/latest')
  t.same([honest.status, honest.verification?.startsWith('verified')], [200, true], 'honest nodes: verified')
  const range = await strict.read('/v1/epochs/42/participants')
  t.same([range.status, range.verification], [503, 'unverified; reason="range"'], 'honest nodes, but a list no proof covers: not served in strict')
  for (const node of strict.nodes) node.lies.forgedValue = true
  clock.advance()
  await until(() => strict.service.chain.verified?.height === clock.height - 2, 'the strict replica\'s V caught up', { timeoutMs: 30_000, intervalMs: 20 })
  const read = await strict.read('/v1/pricing')
  t.same([read.status, read.verification], [503, 'failed'])
  t.match(JSON.parse(read.body), { message: /^no chain node gave an answer that verifies: a forged proof: / })
  const participants = await strict.read('/v1/participants')
  t.same([participants.status, participants.verification], [503, 'unverified; reason="route"'])
  t.match(JSON.parse(participants.body), { message: 'EDGE_API_VERIFICATION=strict serves only verified answers; this one is not (route)' })
  t.equal((await strict.read('/v1/light/validators/' + String(clock.height - 20))).status, 200, 'a fixed route (what a client verifies itself) is served')
})

t.test('before V is known (a trust root above the head): answers serves not-yet, read at the head; strict a 503 naming it', async (t) => {
  const future = { EDGE_API_TRUST_HEIGHT: String(clock.height + 1000), EDGE_API_TRUST_HASH: 'AB'.repeat(32) }
  const early = await replica('answers', future)
  const read = await early.read('/v1/epochs/latest')
  t.same([read.status, read.verification], [200, 'unverified; reason="not-yet"'])
  const strict = await replica('strict', future)
  const refused = await strict.read('/v1/epochs/latest')
  t.same([refused.status, refused.verification], [503, 'unverified; reason="not-yet"'])
  t.match(JSON.parse(refused.body), { message: 'EDGE_API_VERIFICATION=strict serves only verified answers; this one is not (not-yet)' })
})

t.test('headers: every node lying is served as the node said, marked unverified; off: unchanged, no X-Verification', async (t) => {
  const headers = await replica('headers')
  await headers.verified()
  for (const node of headers.nodes) node.lies.forgedAnswers = true
  const read = await headers.read('/v1/epochs/latest')
  t.same([read.status, read.verification], [200, 'unverified; reason="headers-only"'])
  const off = await replica('off')
  for (const node of off.nodes) node.lies.forgedAnswers = true
  const plain = await off.read('/v1/epochs/latest')
  t.same([plain.status, plain.verification], [200, undefined])
})

t.test('answers, the shared tier: a pooled answer carries the X-Verification of the miss that built it', async (t) => {
  const redis = await redisFor(t, 'a proven answer shared between two replicas')
  if (redis === undefined) return
  // A generous store deadline: on a loaded test machine 10 ms is the CPU's, not the store's.
  const env = { EDGE_API_REDIS_URL: redis.url, EDGE_API_REDIS_TIMEOUT: '250ms' }
  const [a, b] = [await replica('answers', env), await replica('answers', env)] as const
  const ready = (line: { msg: string }): boolean => line.msg.startsWith('shared subscription up')
  const named = (line: { msg: string }): boolean => line.msg.startsWith('shared answers named')
  // Both replicas verified to the same V (the clock stopped: the head - 2), both in the pool.
  const V = clock.height - 2
  await until(() => [a, b].every((r) => r.service.chain.verified?.height === V && r.logs.some(ready) && r.logs.some(named)), 'both replicas at V and in the pool', { timeoutMs: 30_000, intervalMs: 50 })
  const first = await a.read('/v1/pricing')
  t.same([first.status, first.cache, first.height], [200, 'miss', V])
  t.match(first.verification, VERIFIED)
  await until(async () => (await (await redis.admin()).keys('edge-api:*:answer:*')).length > 0, 'the answer in the store')
  // Named with the mode: an `off` replica's unproven answer at the same height is never this pool's.
  t.match(await (await redis.admin()).keys('edge-api:*:answer:*'), [/\+answers:answer:/])
  const second = await b.read('/v1/pricing')
  t.same([second.cache, second.verification, second.height, second.body], ['shared', first.verification, V, first.body], 'from the pool, with its verdict')
})
