import t, { type Test } from 'tap'
import { ChainNodes, MAX_RETRY_AFTER_MS, OVERTAKEN_DEMOTES_MS, OVERTAKEN_IN_A_ROW, retryAfterMs, type ChainNode, type ChainNodesOptions, type NodeLog } from '../../src/chain/nodes.js'
import { ManualClock } from '../fixtures/manual-clock.js'
import { until } from '../../harness/wait.js'

const URLS = ['http://a.invalid:1317', 'http://b.invalid:1317/api/', 'http://c.invalid:1317']

/** A log that keeps its lines. */
function memoryLog () {
  const lines: Array<{ level: 'info' | 'warn', msg: string } & Record<string, unknown>> = []
  const log: NodeLog = {
    info: (fields, msg) => { lines.push({ level: 'info', msg, ...fields }) },
    warn: (fields, msg) => { lines.push({ level: 'warn', msg, ...fields }) }
  }
  return { log, lines }
}

function nodeSet (t: Test, options: Partial<ChainNodesOptions> = {}) {
  const { log, lines } = memoryLog()
  const nodes = new ChainNodes({ urls: URLS, pool: {}, probe: async () => {}, log, ...options })
  t.teardown(() => nodes.close())
  const [a, b, c] = nodes.all as [ChainNode, ChainNode, ChainNode]
  return { nodes, lines, a, b, c }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

t.test('each node has its own pool, origin and path prefix, in the order given', async (t) => {
  const { nodes, a, b } = nodeSet(t)
  t.equal(nodes.all.length, 3)
  t.match(a, { index: 0, url: URLS[0], origin: 'http://a.invalid:1317', prefix: '', inFlight: 0, healthy: true })
  t.match(b, { index: 1, origin: 'http://b.invalid:1317', prefix: '/api' })
  t.not(a.pool, b.pool)
})

t.test('pick: the first healthy node, spilling over by reads in flight; every node once per read', async (t) => {
  const { nodes, a, b, c } = nodeSet(t)
  t.equal(nodes.pick(), a, 'idle: the first configured node')
  a.inFlight = 2
  b.inFlight = 1
  c.inFlight = 1
  t.equal(nodes.pick(), b, 'fewest in flight; the earlier one on a tie')
  t.equal(nodes.pick(new Set([b])), c)
  t.equal(nodes.pick(new Set([b, c])), a)
  t.equal(nodes.pick(new Set([a, b, c])), undefined, 'all tried')
})

t.test('pick: a down node only when no healthy one is left, the one with the fewest failed probes first', async (t) => {
  const { nodes, a, b, c } = nodeSet(t, { backoff: { initialMs: 60_000, maxMs: 60_000 } })
  nodes.failed(a, 'refused')
  t.equal(nodes.pick(), b, 'a down node is skipped')
  nodes.failed(b, 'refused')
  nodes.failed(c, 'refused')
  t.equal(nodes.pick(), a, 'all down: still asked, in order')
  ;(a.down as { retryMs: number }).retryMs = 120_000
  t.equal(nodes.pick(), b, 'the one that failed fewer probes first')
  t.equal(nodes.pick(new Set([b, c])), a)
})

t.test('each state change is one log line; repeated failures of a down node are not', async (t) => {
  const clock = new ManualClock()
  const { nodes, lines, a } = nodeSet(t, { backoff: { initialMs: 60_000, maxMs: 60_000 }, clock })
  nodes.answered(a)
  t.same(lines, [], 'a healthy node that answers: nothing to say')
  nodes.failed(a, 'connect ECONNREFUSED 127.0.0.1:1 (ECONNREFUSED)')
  nodes.failed(a, 'again')
  t.equal(a.healthy, false)
  t.same(lines, [{ level: 'warn', msg: 'chain node down', node: URLS[0], reason: 'connect ECONNREFUSED 127.0.0.1:1 (ECONNREFUSED)', retryInMs: 60_000 }])
  await clock.advance(20)
  nodes.answered(a)
  nodes.answered(a)
  t.equal(a.healthy, true)
  t.equal(lines.length, 2)
  t.match(lines[1], { level: 'info', msg: 'chain node up', node: URLS[0], downMs: 20 }, 'with how long it was down')
})

t.test('a down node is probed after a growing interval, up to the cap, until it answers', async (t) => {
  // On a manual clock: the intervals are the backoff's own, exactly, however loaded the machine.
  const clock = new ManualClock(0)
  const probes: number[] = []
  const ref: { nodes?: ChainNodes } = {}
  let answerAfter = 4
  const { nodes, lines, a } = nodeSet(t, {
    backoff: { initialMs: 40, maxMs: 160 },
    clock,
    // Like ChainClient's probe: it reports its own outcome.
    probe: async (node) => {
      probes.push(clock.now())
      if (--answerAfter === 0) ref.nodes?.answered(node)
      else ref.nodes?.failed(node, 'still refused')
    }
  })
  ref.nodes = nodes
  nodes.failed(a, 'refused')
  await clock.advance(10_000)
  t.equal(a.healthy, true, 're-admitted after its probe answered')
  t.same(probes, [40, 120, 280, 440], 'after 40, 80, 160 ms, then 160 again: capped, not doubled')
  t.same(lines.map((l) => l.msg), ['chain node down', 'chain node up'], 'failed probes add no line')
  t.equal(lines[1]?.downMs, 440)
  t.equal(clock.pending, 0, 'no probe once it is back')
})

t.test('pick: a node a hedge overtook comes after the others for OVERTAKEN_DEMOTES_MS, whatever their reads in flight', async (t) => {
  const clock = new ManualClock()
  const { nodes, a, b, c } = nodeSet(t, { clock })
  nodes.overtaken(a)
  t.equal(nodes.pick(), b, 'the next node first')
  b.inFlight = 5
  c.inFlight = 9
  t.equal(nodes.pick(), b, 'before a node overtaken, however busy')
  nodes.overtaken(b)
  t.equal(nodes.pick(), c, 'the one not overtaken')
  nodes.overtaken(c)
  t.equal(nodes.pick(), a, 'all overtaken: fewest in flight, then order')
  await clock.advance(OVERTAKEN_DEMOTES_MS / 2)
  nodes.overtaken(b)
  nodes.answered(b)
  await clock.advance(OVERTAKEN_DEMOTES_MS / 2 - 1)
  t.equal(nodes.pick(), a, 'still all behind')
  await clock.advance(1)
  t.same([a, b, c].map((n) => n.demotedUntil > clock.now()), [false, true, false], 'each for its own 10 s; an answer lifts nothing')
  t.equal(nodes.pick(new Set([a])), c, 'c before b, though b has fewer in flight')
  nodes.failed(a, 'refused')
  t.equal(nodes.pick(new Set([c])), b, 'a node overtaken before one that is down')
})

t.test('a node overtaken by hedges three times in a row is down; an answer in between resets the count', async (t) => {
  const { nodes, lines, a } = nodeSet(t, { backoff: { initialMs: 60_000, maxMs: 60_000 } })
  for (let i = 1; i < OVERTAKEN_IN_A_ROW; i++) nodes.overtaken(a)
  nodes.answered(a)
  for (let i = 1; i < OVERTAKEN_IN_A_ROW; i++) nodes.overtaken(a)
  t.equal(a.healthy, true, 'never three in a row')
  nodes.overtaken(a)
  t.equal(a.healthy, false)
  t.match(lines, [{ level: 'warn', msg: 'chain node down', reason: 'overtaken by hedges 3 times in a row without answering' }])
  t.equal(a.overtaken, 0, 'counted afresh once it is back')
})

t.test('a probe that throws counts as failed; a node that answered and failed again during a probe keeps the new schedule', async (t) => {
  const ref: { nodes?: ChainNodes } = {}
  const probed = { calls: 0 }
  const { nodes, a } = nodeSet(t, {
    backoff: { initialMs: 20, maxMs: 20 },
    probe: async (node) => {
      probed.calls++
      if (probed.calls === 1) throw new Error('probe broke')
      // Back, then down again while this probe ran: a fresh schedule exists already.
      ref.nodes?.answered(node)
      ref.nodes?.failed(node, 'refused again')
    }
  })
  ref.nodes = nodes
  nodes.failed(a, 'refused')
  await until(() => probed.calls >= 3, 'three probes: again after the throw, and again on the fresh schedule')
  await nodes.close()
  const after = probed.calls
  await sleep(80)
  t.equal(probed.calls, after, 'close stops probing')
})

t.test('after close, failures change nothing', async (t) => {
  const { nodes, lines, a } = nodeSet(t)
  await nodes.close()
  nodes.failed(a, 'refused')
  t.equal(a.healthy, true)
  t.same(lines, [])
})

t.test('a single node is never probed on its own: every read asks it anyway', async (t) => {
  const { log, lines } = memoryLog()
  let probes = 0
  const nodes = new ChainNodes({ urls: URLS.slice(0, 1), pool: {}, probe: async () => { probes++ }, log, backoff: { initialMs: 10, maxMs: 10 } })
  t.teardown(() => nodes.close())
  const [a] = nodes.all as [ChainNode]
  nodes.failed(a, 'refused')
  t.same(lines, [{ level: 'warn', msg: 'chain node down', node: URLS[0], reason: 'refused' }], 'no retryInMs: no retry of its own')
  t.equal(nodes.pick(), a, 'still the node every read asks')
  await sleep(60)
  t.equal(probes, 0)
  nodes.answered(a)
  t.equal(a.healthy, true, 'back with its next answer')
})

t.test('without a log, state changes are silent', async (t) => {
  const nodes = new ChainNodes({ urls: URLS.slice(0, 1), pool: {}, probe: async () => {} })
  t.teardown(() => nodes.close())
  const [a] = nodes.all as [ChainNode]
  nodes.failed(a, 'refused')
  nodes.answered(a)
  t.equal(a.healthy, true)
})

t.test('retryAfterMs: Retry-After in seconds or as an HTTP-date, capped; none when absent, unreadable or past', async (t) => {
  const now = Date.parse('2026-12-02T17:00:00Z')
  t.equal(retryAfterMs('30', now), 30_000)
  t.equal(retryAfterMs(' 5 ', now), 5000)
  t.equal(retryAfterMs('Wed, 02 Dec 2026 17:00:20 GMT', now), 20_000)
  t.equal(retryAfterMs('3600', now), MAX_RETRY_AFTER_MS, 'an hour is capped')
  t.equal(retryAfterMs('0', now), undefined, '0: the usual backoff')
  t.equal(retryAfterMs('Wed, 02 Dec 2026 16:59:00 GMT', now), undefined, 'a date past')
  t.equal(retryAfterMs('soon', now), undefined)
  t.equal(retryAfterMs('', now), undefined)
  t.equal(retryAfterMs(undefined, now), undefined)
  t.equal(retryAfterMs(['30', '60'], now), undefined, 'repeated: not a header Node gives as one string')
  t.ok((retryAfterMs('2') as number) === 2000, 'now defaults to the wall clock')
})

t.test('a node that failed with a Retry-After is first probed after it, then at a growing interval', async (t) => {
  const clock = new ManualClock()
  const probed: number[] = []
  const { log, lines } = memoryLog()
  const nodes = new ChainNodes({ urls: URLS, pool: {}, log, clock, probe: async () => { probed.push(clock.now()) } })
  t.teardown(async () => nodes.close())
  const node = nodes.all[0] as ChainNode
  const start = clock.now()
  nodes.failed(node, 'answered 429 (rate-limited: slow down)', 30_000)
  t.match(lines, [{ level: 'warn', msg: 'chain node down', retryInMs: 30_000 }])
  t.equal(nodes.pick(), nodes.all[1], 'skipped meanwhile')
  clock.advance(29_999)
  t.same(probed, [], 'not probed before its Retry-After')
  clock.advance(1)
  t.same(probed, [start + 30_000])
  // The probe's outcome (it did not bring the node back) is handled once it has settled.
  await new Promise((resolve) => setImmediate(resolve))
  clock.advance(5000)
  t.same(probed, [start + 30_000, start + 35_000], 'then at the usual interval, at most its 5 s')
})

t.test('a node caught lying takes no reads and is tried after every other node, down ones included, for good', async (t) => {
  const { nodes, a, b, c } = nodeSet(t)
  nodes.lying(a)
  t.equal(nodes.takesReads(a), false)
  t.equal(nodes.pick(), b, 'the next node first')
  nodes.failed(b, 'refused')
  t.equal(nodes.pick(new Set([c])), b, 'a down node before a liar')
  t.equal(nodes.pick(new Set([b, c])), a, 'the liar last, when every other node has been tried')
  nodes.answered(a)
  t.equal(nodes.takesReads(a), false, 'answering does not make it honest')
})
