import t, { type Test } from 'tap'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'
import { MIN_BLOCK_INTERVAL_MS } from '../../src/chain/head-table.js'
import type { ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { startChainNodes } from '../fixtures/chain.js'
import { serveMain } from '../fixtures/serve-main.js'
import { type MainProcess } from '../../harness/main-process.js'
import { until } from '../../harness/wait.js'

// Issue 33, over a real socket against node dist/main.js: heights that fail safe. A node
// that tells no height, or whose head poll hangs, is read unpinned instead of failing every
// latest-state read; a head is fresh only when an answer at or above it confirms it. Issue 40
// (review A3, A14): the known/unknown state steady when blocks/latest hangs or is filtered,
// and a bogus height costing latest reads a bounded time.

t.setTimeout(120_000)

/** The latest-state reads the issue names: each failed with 503 behind a node without heights. */
const LATEST_READS = ['/v1/epochs/latest', '/v1/participants', '/v1/pricing', '/v1/restrictions/status']
/** The answer cache as deployed (its default): the head poll runs before every latest-state read. */
const CACHE_AS_DEPLOYED = { EDGE_API_CACHE_SIZE: '64MiB' }
const HEIGHTS_UNKNOWN = 'chain heights unknown; serving latest-state reads unpinned'

async function serve (t: Test, sims: ChainSimulator[], env: Record<string, string> = {}): Promise<{ main: MainProcess, origin: string }> {
  const { main, origin } = await serveMain(t, sims, { ...CACHE_AS_DEPLOYED, ...env })
  // The process' first requests compile its code: paid here, on routes without a chain read.
  for (let i = 0; i < 20; i++) await fetch(`${origin}/v1/status`)
  return { main, origin }
}

interface Timed { readonly status: number, readonly ms: number, readonly headers: Headers, readonly body: string }

async function timedGet (url: string): Promise<Timed> {
  const started = performance.now()
  const res = await fetch(url, { signal: AbortSignal.timeout(20_000) })
  const body = await res.text()
  return { status: res.status, ms: performance.now() - started, headers: res.headers, body }
}

/**
 * Each of the four reads twice, one after the other: 200 within 3 s each (the landed code: 4.4 s,
 * or 503), the process's very first within 10 s; then /readyz. That first read also compiles its
 * route's code and waits the first poll round (its 500 ms budget): 3,082 ms at load average 20,
 * where the others took at most 667 ms (issue 54). One held by the hanging poll itself would wait
 * the chain's 30 s timeout.
 */
async function fourReadsServed (t: Test, origin: string): Promise<Timed[]> {
  const answers: Timed[] = []
  for (const round of [1, 2]) {
    for (const path of LATEST_READS) {
      const answer = await timedGet(origin + path)
      t.equal(answer.status, 200, `${path} (round ${round}): ${answer.status} in ${answer.ms.toFixed(0)} ms${answer.status === 200 ? '' : `: ${answer.body}`}`)
      const boundS = answers.length === 0 ? 10 : 3
      t.ok(answer.ms < boundS * 1000, `${path} (round ${round}): answered within ${boundS} s (${answer.ms.toFixed(0)} ms)`)
      answers.push(answer)
    }
  }
  const ready = await timedGet(`${origin}/readyz`)
  t.equal(ready.status, 200, '/readyz 200: the reads are answered')
  return answers
}

t.test('a node that tells no height (no height header, blocks/latest filtered by a proxy): the four latest-state reads 200 within 3 s, unpinned and uncached; /readyz 200', async (t) => {
  const { sims: [sim] } = await startChainNodes(t, [0])
  sim!.tellsHeight = false
  sim!.raw(LATEST_BLOCK_PATH, 404, '<html><body><h1>404 Not Found</h1>nginx</body></html>')
  const { main, origin } = await serve(t, [sim!])
  const answers = await fourReadsServed(t, origin)
  t.same(answers.map((a) => a.headers.get('x-block-height')), answers.map(() => null), 'no X-Block-Height: no height is known')
  t.same(answers.map((a) => a.headers.get('x-cache')), answers.map(() => null), 'never served from the cache: nothing is keyed without a height')
  const [first, second] = [answers[0], answers[4]] as [Timed, Timed]
  t.equal(first.headers.get('etag'), second.headers.get('etag'), 'the same body, the same ETag (a tag of the body, not of a key without height)')
  const warned = main.lines.filter((l) => l.msg === HEIGHTS_UNKNOWN)
  t.equal(warned.length, 1, 'one warn line for the change')
  t.equal(warned[0]?.level, 40, 'at warn')
})

t.test('two nodes whose blocks/latest hangs (they tell heights on their answers): the four reads 200 within 3 s, pinned to the height answered; /readyz 200', async (t) => {
  const { sims } = await startChainNodes(t, [0, 0])
  for (const sim of sims) sim.hang(LATEST_BLOCK_PATH)
  const { main, origin } = await serve(t, sims)
  const answers = await fourReadsServed(t, origin)
  for (const answer of answers) {
    const height = Number(answer.headers.get('x-block-height'))
    t.equal(height, sims[0]!.head, `X-Block-Height ${answer.headers.get('x-block-height')}: the height the answer was read at`)
  }
  t.notOk(main.lines.some((l) => l.msg === 'chain node down'), 'a head poll that hangs marks no node down: their queries answer')
})

t.test('a node that tells no height and whose blocks/latest hangs: the four reads 200 within 3 s; /readyz 200', async (t) => {
  const { sims: [sim] } = await startChainNodes(t, [0])
  sim!.tellsHeight = false
  sim!.hang(LATEST_BLOCK_PATH)
  const { origin } = await serve(t, [sim!])
  const answers = await fourReadsServed(t, origin)
  t.same(answers.map((a) => a.headers.get('x-block-height')), answers.map(() => null), 'no X-Block-Height')
})

t.test('the stale head: the preferred node 1000 blocks behind answers /v1/versions all the time; the served height follows the chain within EDGE_API_HEAD_MAX_AGE plus one poll', async (t) => {
  const { clock, sims } = await startChainNodes(t, [1000, 0])
  const { origin } = await serve(t, sims, { EDGE_API_HEAD_MAX_AGE: '1s' })
  const maxAgeMs = 1000
  // One poll's budget (HEAD_POLL_TIMEOUT_MS; written out, so that this runs against the landed code too).
  const pollMs = 500
  t.equal((await timedGet(`${origin}/v1/epochs/latest`)).status, 200, 'warmed up')
  // When the chain reached each height.
  const reached = new Map<number, number>([[clock.height, performance.now()]])
  const timer = setInterval(() => {
    clock.advance()
    reached.set(clock.height, performance.now())
  }, 100)
  t.teardown(() => { clearInterval(timer) })
  // 3 s: three EDGE_API_HEAD_MAX_AGEs and thirty blocks.
  const runUntil = performance.now() + 3000
  let versions = 0
  const versionTraffic = (async () => {
    while (performance.now() < runUntil) {
      if ((await timedGet(`${origin}/v1/versions`)).status === 200) versions++
      // Every 20 ms is all the time to a 1 s EDGE_API_HEAD_MAX_AGE; back to back, these reads were
      // most of this test's CPU (issue 54).
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  let worstMs = 0
  let reads = 0
  let first = 0
  let last = 0
  while (performance.now() < runUntil) {
    const started = performance.now()
    const answer = await timedGet(`${origin}/v1/epochs/latest`)
    t.equal(answer.status, 200)
    const height = Number(answer.headers.get('x-block-height'))
    first ||= height
    last = height
    reads++
    // How long before this read started the chain had already moved past its height.
    const passedAt = reached.get(height + 1)
    if (passedAt !== undefined && passedAt < started) worstMs = Math.max(worstMs, started - passedAt)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await versionTraffic
  clearInterval(timer)
  t.ok(versions > 5, `${versions} /v1/versions answered meanwhile`)
  // What fails with the stale node's head kept (the feature off): the served height never moves.
  t.ok(last > first, `the served height moved ${last - first} blocks in 3 s (${reads} reads), the chain ${clock.height - first}`)
  // EDGE_API_HEAD_MAX_AGE plus one poll (1.5 s) is the design's figure; the bound is twice that,
  // since a loaded two-core machine delays a read by a second and more (measured: fails beside a
  // second suite at 1.5 s). Kept stuck at the stale head, the lag grows with the whole run (3 s).
  t.ok(worstMs <= 2 * (maxAgeMs + pollMs), `the served height was behind the chain by at most ${worstMs.toFixed(0)} ms (design: ${maxAgeMs + pollMs} ms; bound ${2 * (maxAgeMs + pollMs)} ms)`)
})

t.test('ready stays honest: with every node refusing, /readyz 503 and the reads 503', async (t) => {
  const { sims: [sim] } = await startChainNodes(t, [0])
  sim!.tellsHeight = false
  const { origin } = await serve(t, [sim!])
  t.equal((await timedGet(`${origin}/v1/epochs/latest`)).status, 200)
  await sim!.refuse()
  await until(async () => (await timedGet(`${origin}/readyz`)).status === 503, '/readyz 503 once the node refuses', { timeoutMs: 10_000, intervalMs: 250 })
  // Within EDGE_API_HEAD_MAX_AGE of the last confirmation the cached answer is still served.
  await until(async () => (await timedGet(`${origin}/v1/epochs/latest`)).status === 503, 'the reads 503 once the head is older than EDGE_API_HEAD_MAX_AGE', { timeoutMs: 10_000, intervalMs: 250 })
})

const HEIGHTS_KNOWN = 'chain heights known again; latest-state reads pinned to the head'

/**
 * The four reads in turn for `ms` (blocks landing meanwhile), 20 ms between rounds: every answer,
 * timed. A stall this file guards against lasts 500 ms to a second, and any answer while a poll
 * is in flight flipped the heights' state (review A3): reads a few times a block see both. Back to
 * back, they cost both processes a core for the whole run on a machine the suite shares (issue 54).
 */
async function readFor (origin: string, ms: number): Promise<Timed[]> {
  const answers: Timed[] = []
  const end = performance.now() + ms
  while (performance.now() < end) {
    for (const path of LATEST_READS) answers.push(await timedGet(origin + path))
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return answers
}

// Review A3: known/unknown was decided by any answer arriving while a poll was in flight; with
// blocks/latest hanging or filtered it flapped every ~3 s, each flip stalling reads up to 1 s.
for (const [fault, make] of [
  ['hangs', (sim: ChainSimulator) => { sim.hang(LATEST_BLOCK_PATH) }],
  ['is filtered (a proxy\'s fast 404)', (sim: ChainSimulator) => { sim.raw(LATEST_BLOCK_PATH, 404, '<html><body><h1>404 Not Found</h1>nginx</body></html>') }]
] as const) {
  t.test(`blocks/latest ${fault}, the answers tell their heights, blocks landing: 5 s steady, no read stalled, one warn line, the heights unknown throughout`, async (t) => {
    const { clock, sims } = await startChainNodes(t, [0, 0])
    for (const sim of sims) make(sim)
    // No faster than the chain an answer's rise is judged by (a block per MIN_BLOCK_INTERVAL_MS):
    // with blocks/latest out, answers alone tell the head, and at a block per 200 ms a loaded
    // machine's 2 s without one left every later height 'far above' for good (issue 54).
    clock.every(MIN_BLOCK_INTERVAL_MS)
    t.teardown(() => { clock.stop() })
    const { main, origin } = await serve(t, sims, { EDGE_API_HEAD_MAX_AGE: '1s' })
    // 5 s: the flapping this guards came every ~3 s (review A3).
    const answers = await readFor(origin, 5000)
    const [first, ...later] = answers as [Timed, ...Timed[]]
    const times = later.map((a) => a.ms).sort((a, b) => a - b)
    const median = times[Math.floor(times.length / 2)] as number
    t.same([...new Set(answers.map((a) => a.status))], [200], `${answers.length} reads, all 200`)
    // The first latest read waits for one round of the poll (its 500 ms budget), and compiles its
    // route's code; one that waited for the hanging poll itself would wait the chain's 30 s
    // timeout. Ten budgets: a loaded two-core machine added 1.1 s (1,630 ms at load 20, issue 54).
    t.ok(first.ms <= 5000, `the first read waited for one round of the poll, not for the hanging poll: ${first.ms.toFixed(0)} ms (bound 5 s)`)
    // A flip stalled reads up to a second each (review A3); the flips themselves are what the warn
    // lines below catch without a clock. A read made to wait for a hanging poll every time waits
    // its 500 ms budget: the median would be past it. The median, not the slowest read: a loaded
    // machine delays single reads by a second (issue 54).
    t.ok(median < 250, `later reads not held by the poll: the median ${median.toFixed(0)} ms (the slowest ${times.at(-1)?.toFixed(0)} ms)`)
    const changes = main.lines.filter((l) => l.msg === HEIGHTS_UNKNOWN || l.msg === HEIGHTS_KNOWN)
    t.same(changes.map((l) => l.msg), [HEIGHTS_UNKNOWN], 'one warn line: unknown, never known again (the gauge edge_api_chain_heights_known is 0 throughout)')
    t.ok(main.lines.filter((l) => l.level === 40).length <= 1, 'no other warn line', { warns: main.lines.filter((l) => l.level === 40) })
  })
}

// Review A14: one bogus height (a proxy's glitch, a node of another network) pinned every
// latest read to a height no node has: 503 until restart. Heights are plausible before they count.
t.test('one answer claims height 10^9: not counted; every latest read 200 at the chain\'s real heights, no restart', async (t) => {
  const { clock, sims } = await startChainNodes(t, [0, 0])
  clock.every(100)
  t.teardown(() => { clock.stop() })
  const { main, origin } = await serve(t, sims, { EDGE_API_HEAD_MAX_AGE: '1s' })
  const before = await readFor(origin, 1000)
  sims[0]!.lie = { prefix: '/productscience', height: 1_000_000_000 }
  sims[1]!.lie = { prefix: '/productscience', height: 1_000_000_000 }
  // Two seconds, twice EDGE_API_HEAD_MAX_AGE: counted, the lie failed every read after it until a restart.
  const after = await readFor(origin, 2000)
  t.equal(sims[0]!.lie ?? sims[1]!.lie, undefined, 'the lie was told')
  const failed = after.filter((a) => a.status !== 200)
  t.same(failed.map((a) => `${a.status} ${a.body}`), [], `${after.length} reads after it, none failed (cost: 0 s)`)
  const heights = [...before, ...after].map((a) => Number(a.headers.get('x-block-height')))
  t.ok(heights.every((h) => h <= clock.height), `no read served above the chain's head (highest ${Math.max(...heights)})`)
  t.ok(heights.at(-1)! > heights[0]!, 'the served height kept moving with the chain')
  const told = main.lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('chain node told a height far above'))
  // A node's lie may go unheard when its answer is not needed (a cache hit, the other node's answer
  // first), or be heard twice (a hedged read's copy): a line or two per node, never a flood.
  t.ok(told.length >= 1 && told.length <= 4, `a warn line or two per node that told it, not one per read (${told.length})`)
})

t.test('the head poll tells height 10^9 once: not counted (a glitch does not repeat); every latest read 200', async (t) => {
  const { clock, sims } = await startChainNodes(t, [0, 0])
  clock.every(100)
  t.teardown(() => { clock.stop() })
  const { origin } = await serve(t, sims, { EDGE_API_HEAD_MAX_AGE: '1s' })
  await readFor(origin, 500)
  let told = false
  sims[0]!.onRequest = (pathname) => {
    if (pathname !== LATEST_BLOCK_PATH || told) return
    told = true
    sims[0]!.override(LATEST_BLOCK_PATH, { block: { header: { height: '1000000000' } } })
    setImmediate(() => { sims[0]!.clearFaults() })
  }
  const after = await readFor(origin, 2000)
  t.ok(told, 'the poll was answered with the lie')
  t.same(after.filter((a) => a.status !== 200).map((a) => `${a.status} ${a.body}`), [], `${after.length} reads, none failed`)
  t.ok(after.every((a) => Number(a.headers.get('x-block-height')) <= clock.height), 'none above the chain\'s head')
})

t.test('the very first head told is 10^9 (nothing to judge it by): latest reads fail at first, then 200 without restart', async (t) => {
  const { clock, sims } = await startChainNodes(t, [0])
  clock.every(100)
  t.teardown(() => { clock.stop() })
  const [sim] = sims as [ChainSimulator]
  // Its body and its height header both say so.
  sim.override(LATEST_BLOCK_PATH, { block: { header: { height: '1000000000' } } })
  sim.lie = { prefix: LATEST_BLOCK_PATH, height: 1_000_000_000 }
  let polls = 0
  sim.onRequest = (pathname) => { if (pathname === LATEST_BLOCK_PATH && ++polls === 2) sim.clearFaults() }
  const { main, origin } = await serve(t, sims, { EDGE_API_HEAD_MAX_AGE: '1s' })
  const started = performance.now()
  let lastFailure = -1
  let answers = 0
  // Read until ten in a row are 200: the false floor dropped without a restart. Kept (the
  // feature off), every read fails and the wait below fails by name. How soon it is dropped
  // (design: EDGE_API_HEAD_MAX_AGE + one 500 ms poll) is reported, not bounded: on a loaded
  // two-core machine the last failure was measured at 3.8 s against 1.5 s (issue 54).
  let inARow = 0
  await until(async () => {
    const answer = await timedGet(`${origin}/v1/epochs/latest`)
    answers++
    if (answer.status === 200) inARow++
    else { inARow = 0; lastFailure = performance.now() - started }
    return inARow >= 10
  }, 'ten latest reads in a row 200 after the false floor', { timeoutMs: 20_000, intervalMs: 0 })
  t.ok(lastFailure >= 0, 'reads failed at first: pinned to a height no node has')
  t.comment(`the last failed read ${lastFailure.toFixed(0)} ms after the first (design: 1 s + one 500 ms poll)`)
  const last = await timedGet(`${origin}/v1/epochs/latest`)
  t.equal(last.status, 200)
  t.ok(Number(last.headers.get('x-block-height')) <= clock.height, 'served at the chain\'s real height')
  t.ok(main.lines.some((l) => l.msg === 'served height far above every node\'s head; dropped to the best head'), 'the false floor dropped, logged')
  t.comment(`${answers} reads until ten in a row were 200`)
})
