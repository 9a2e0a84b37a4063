import t from 'tap'
import { HEAD_EXPIRES_MS, HeadTable, MIN_BLOCK_INTERVAL_MS, RISE_SLACK_BLOCKS } from '../../src/chain/head-table.js'

// The heads table (src/chain/head-table.ts): what counts as a node's head. Review A14: one
// bogus height must not become the head every latest read is pinned to.

const MAX_LAG = 2
const WINDOW = MAX_LAG + RISE_SLACK_BLOCKS

function table (nodeCount = 2): { heads: HeadTable, lines: Array<[string, string]>, fields: object[] } {
  const lines: Array<[string, string]> = []
  const fields: object[] = []
  const heads = new HeadTable({
    nodeCount,
    maxLag: MAX_LAG,
    urls: Array.from({ length: nodeCount }, (_, i) => `http://node-${i}`),
    log: {
      info: (f, msg) => { lines.push(['info', msg]); fields.push(f) },
      warn: (f, msg) => { lines.push(['warn', msg]); fields.push(f) }
    }
  })
  return { heads, lines, fields }
}

t.test('the first head told counts, whatever it is: there is nothing to judge it by', async (t) => {
  const { heads } = table()
  t.equal(heads.record(0, 1_000_000_000, 'latest', 0), 'counted')
  t.equal(heads.best(0), 1_000_000_000)
})

t.test('an answer\'s rise counts within the window; beyond it, not at all (one warn line per episode)', async (t) => {
  const { heads, lines } = table()
  heads.record(0, 100, 'poll', 0)
  t.equal(heads.record(1, 100 + WINDOW, 'latest', 0), 'counted', `${WINDOW} blocks above: counted`)
  t.equal(heads.record(0, 100 + 2 * WINDOW + 1, 'pinned', 0), 'implausible', 'more than the window above the best head')
  t.equal(heads.record(0, 1_000_000_000, 'latest', 0), 'implausible')
  t.equal(heads.record(0, 1_000_000_000, 'latest', 0), 'implausible', 'told again by an answer: still not')
  t.equal(heads.best(0), 100 + WINDOW)
  t.same(lines, [['warn', 'chain node told a height far above every head; not counted unless its head poll tells it twice']], 'one line')
  t.equal(heads.record(0, 100 + WINDOW + 1, 'latest', 0), 'counted')
  t.same(lines.at(-1), ['info', 'chain node heights plausible again'])
})

t.test('the window grows with the time since the best head was told: an idle replica\'s next answer is many blocks on', async (t) => {
  const { heads } = table()
  heads.record(0, 100, 'poll', 0)
  const idleMs = 20_000
  const blocks = idleMs / MIN_BLOCK_INTERVAL_MS
  t.equal(heads.record(0, 100 + WINDOW + blocks + 1, 'latest', idleMs), 'implausible')
  t.equal(heads.record(0, 100 + WINDOW + blocks, 'latest', idleMs), 'counted')
})

t.test('a head poll\'s implausible rise counts when its next poll tells it again (a glitch does not repeat)', async (t) => {
  const { heads } = table()
  heads.record(0, 100, 'poll', 0)
  t.equal(heads.record(1, 1_000_000_000, 'poll', 0), 'implausible', 'once: not counted')
  t.equal(heads.record(1, 101, 'poll', 1), 'counted', 'its next poll tells the real head')
  t.equal(heads.record(1, 1_000_000_000, 'poll', 2), 'implausible')
  t.equal(heads.record(1, 1_000_000_000 + WINDOW + 1, 'latest', 3), 'implausible', 'an answer confirms nothing')
  t.equal(heads.record(1, 1_000_000_000 - 1, 'poll', 3), 'implausible', 'a poll telling less than the candidate confirms nothing (a new candidate)')
  t.equal(heads.record(1, 1_000_000_000 + WINDOW, 'poll', 4), 'implausible', 'too far beyond the candidate: a new one again')
  t.equal(heads.record(1, 1_000_000_000 + WINDOW + 1, 'poll', 5), 'counted', 'told twice in a row by its own poll: a node of another network, believed')
  t.equal(heads.best(5), 1_000_000_000 + WINDOW + 1)
})

t.test('a node telling its latest height far below its record is believed (restarted lower, or a false first head); a pinned answer tells no head', async (t) => {
  const { heads } = table()
  heads.record(0, 1_000_000_000, 'poll', 0)
  t.equal(heads.record(0, 100, 'pinned', 1), 'behind', 'a pinned answer: the node has at least that height')
  t.equal(heads.record(0, 1_000_000_000 - WINDOW, 'latest', 1), 'behind', 'within the window: a race, not a reset')
  t.equal(heads.head(0, 1), 1_000_000_000)
  t.equal(heads.record(0, 100, 'poll', 1), 'counted')
  t.equal(heads.best(1), 100)
  t.equal(heads.record(0, 100, 'latest', 2), 'behind', 'the same head again')
})

t.test('a head not told for HEAD_EXPIRES_MS (a down node\'s) no longer counts; told at the same height, it is kept fresh', async (t) => {
  const { heads } = table()
  heads.record(0, 100, 'poll', 0)
  heads.record(1, 90, 'poll', 0)
  heads.record(1, 90, 'pinned', HEAD_EXPIRES_MS)
  t.equal(heads.best(HEAD_EXPIRES_MS), 100)
  t.equal(heads.head(0, HEAD_EXPIRES_MS + 1), 0, 'node 0 expired')
  t.equal(heads.best(HEAD_EXPIRES_MS + 1), 90, 'the best head is node 1\'s, kept fresh by its answer at its head')
  const custom = new HeadTable({ nodeCount: 1, maxLag: 0, urls: ['u'], log: { info () {}, warn () {} }, expiresMs: 10 })
  custom.record(0, 5, 'poll', 0)
  t.equal(custom.best(11), 0, 'expiresMs as configured')
})

t.test('lag is judged when asked, one line per change; an unknown head is not judged', async (t) => {
  const { heads, lines } = table(3)
  heads.record(0, 100, 'poll', 0)
  heads.record(1, 97, 'poll', 0)
  heads.judgeLag(0)
  t.ok(heads.lagging(1))
  t.notOk(heads.lagging(2), 'no head yet: not judged')
  heads.judgeLag(0)
  heads.record(1, 99, 'poll', 1)
  heads.judgeLag(1)
  t.notOk(heads.lagging(1))
  t.same(lines.map(([, msg]) => msg), ['chain node lagging; no latest-state reads until it catches up', 'chain node caught up'])
})

t.test('lagging means more than EDGE_API_MAX_NODE_LAG behind; the log names the node and both heads', async (t) => {
  const { heads, fields } = table(3)
  heads.record(0, 100, 'poll', 0)
  heads.record(1, 100 - MAX_LAG, 'poll', 0)
  heads.record(2, 100 - MAX_LAG - 1, 'poll', 0)
  heads.judgeLag(0)
  t.notOk(heads.lagging(1), 'exactly maxLag behind: takes latest-state reads')
  t.ok(heads.lagging(2))
  t.same(fields, [{ node: 'http://node-2', head: 100 - MAX_LAG - 1, best: 100, maxLag: MAX_LAG }])
})

t.test('the rise allowed grows from when the best head was last told, not from the clock\'s origin', async (t) => {
  const { heads } = table()
  heads.record(0, 100, 'poll', 10_000)
  t.equal(heads.record(1, 100 + WINDOW + 1, 'latest', 10_000), 'implausible', 'no time since the best head: the window alone')
  t.equal(heads.record(1, 100 + WINDOW + 1, 'latest', 10_000 + MIN_BLOCK_INTERVAL_MS), 'counted', 'one block interval later: one block more')
})

t.test('only a node\'s own head poll confirms an implausible height, told again at or within the window beyond it', async (t) => {
  const { heads } = table()
  heads.record(0, 100, 'poll', 0)
  t.equal(heads.record(1, 1_000_000_000, 'latest', 0), 'implausible')
  t.equal(heads.record(1, 1_000_000_000, 'poll', 1), 'implausible', 'an answer\'s height is no candidate for the poll to confirm')
  t.equal(heads.record(1, 1_000_000_000, 'latest', 2), 'implausible', 'nor does an answer confirm the poll\'s')
  t.equal(heads.record(1, 1_000_000_000, 'poll', 3), 'counted', 'the same height told by the next poll')
  const { heads: other } = table()
  other.record(0, 100, 'poll', 0)
  other.record(1, 1_000_000_000, 'poll', 0)
  t.equal(other.record(1, 1_000_000_000 + WINDOW, 'poll', 1), 'counted', 'the window beyond the candidate: confirmed')
})

t.test('each episode of implausible heights has its warn line, naming the node and the heights', async (t) => {
  const { heads, lines, fields } = table()
  heads.record(0, 100, 'poll', 0)
  heads.record(1, 1_000_000_000, 'latest', 0)
  heads.record(1, 101, 'latest', 0)
  heads.record(1, 2_000_000_000, 'latest', 0)
  t.same(lines.map(([level]) => level), ['warn', 'info', 'warn'], 'two episodes, two warn lines')
  t.same(fields, [
    { node: 'http://node-1', height: 1_000_000_000, best: 100, window: WINDOW },
    { node: 'http://node-1', head: 101 },
    { node: 'http://node-1', height: 2_000_000_000, best: 101, window: WINDOW }
  ])
})
