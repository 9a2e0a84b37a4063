import t from 'tap'
import { ANSWERED_HEIGHT_HEADER, answeredHeight, isUnservableHeight } from '../../src/chain/height-headers.js'

// Heights on the wire (src/chain/height-headers.ts): the node's answered-height header, read
// strictly, and the gateway's words for a height it cannot serve.

t.test('the answered height: a positive integer of at most 16 digits, else none', async (t) => {
  t.equal(answeredHeight({ [ANSWERED_HEIGHT_HEADER]: '1843210' }), 1843210)
  t.equal(answeredHeight({ [ANSWERED_HEIGHT_HEADER]: '1000000000000000' }), 1e15)
  for (const value of ['0', '-1', '01', '1.5', 'abc', '', '12345678901234567']) t.equal(answeredHeight({ [ANSWERED_HEIGHT_HEADER]: value }), undefined, JSON.stringify(value))
  t.equal(answeredHeight({}), undefined, 'absent')
  t.equal(answeredHeight({ [ANSWERED_HEIGHT_HEADER]: ['5', '6'] as unknown as string }), undefined, 'repeated')
})

t.test('a height a node cannot serve, by the gateway\'s words', async (t) => {
  t.ok(isUnservableHeight('invalid height: cannot query with height in the future; please provide a valid height'))
  t.ok(isUnservableHeight('failed to load state at height 5; version does not exist (latest height: 10)'))
  t.ok(isUnservableHeight('height 5 is not available, lowest height is 7'))
  t.notOk(isUnservableHeight('epoch not found'))
})
