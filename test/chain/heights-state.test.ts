import t from 'tap'
import { HEIGHTS_KNOWN, HEIGHTS_UNKNOWN, HeightsKnowledge, TRANSITIONS, type HeightsState, type PollOutcome } from '../../src/chain/heights-state.js'

// The known/unknown state machine (src/chain/heights-state.ts), driven by the head poll's
// outcomes alone: every transition, and the log lines a change writes.

function knowledgeIn (state: HeightsState, lines: string[]): HeightsKnowledge {
  const knowledge = new HeightsKnowledge({ info: () => {}, warn: (_fields, message) => { lines.push(message) } })
  if (state !== 'starting') knowledge.polled(state === 'known' ? 'told' : 'silent', {})
  lines.length = 0
  return knowledge
}

const table: Array<[HeightsState, PollOutcome, HeightsState, boolean, string[]]> = [
  // from, poll outcome, to, known (the gauge), warn lines
  ['starting', 'told', 'known', true, []],
  ['starting', 'silent', 'unknown', false, [HEIGHTS_UNKNOWN]],
  ['known', 'told', 'known', true, []],
  ['known', 'silent', 'unknown', false, [HEIGHTS_UNKNOWN]],
  ['unknown', 'told', 'known', true, [HEIGHTS_KNOWN]],
  ['unknown', 'silent', 'unknown', false, []]
]

t.test('every transition: the table, the gauge and the warn lines', async (t) => {
  for (const [from, outcome, to, known, warned] of table) {
    const lines: string[] = []
    const knowledge = knowledgeIn(from, lines)
    t.equal(knowledge.state, from)
    knowledge.polled(outcome, { best: 1 })
    t.equal(knowledge.state, to, `${from} + ${outcome} → ${to}`)
    t.equal(TRANSITIONS[from][outcome], to, 'as TRANSITIONS says')
    t.equal(knowledge.known, known, `known ${known}`)
    t.same(lines, warned, `warn lines: ${warned.length}`)
  }
  t.equal(Object.keys(TRANSITIONS).length * 2, table.length, 'the table above covers every state and outcome')
})

t.test('starting counts as known: a read waits for the first poll rather than going unpinned', async (t) => {
  t.ok(new HeightsKnowledge({ info: () => {}, warn: () => {} }).known)
})

t.test('a poll silent forever is one warn line, however many rounds (no flapping)', async (t) => {
  const lines: string[] = []
  const knowledge = knowledgeIn('known', lines)
  for (let i = 0; i < 100; i++) knowledge.polled('silent', {})
  t.same(lines, [HEIGHTS_UNKNOWN])
})

t.test('the warn lines say what changed, in words an operator searches for', async (t) => {
  t.match(HEIGHTS_UNKNOWN, /^chain heights unknown; /)
  t.match(HEIGHTS_KNOWN, /^chain heights known again; /)
})
