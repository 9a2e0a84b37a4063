import t from 'tap'
import {
  BLOCK_ID_FLAG_NAMES, BlockIdFlag, enumByName, isZeroBlockId, MAX_TOTAL_VOTING_POWER, SIGNED_MSG_TYPE_NAMES, SignedMsgType
} from '../../src/cometbft/types.js'

t.test('the gateway\'s enum names are CometBFT\'s numbers', async (t) => {
  t.same(BLOCK_ID_FLAG_NAMES, { BLOCK_ID_FLAG_UNKNOWN: 0, BLOCK_ID_FLAG_ABSENT: 1, BLOCK_ID_FLAG_COMMIT: 2, BLOCK_ID_FLAG_NIL: 3 })
  t.same(BlockIdFlag, { Absent: 1, Commit: 2, Nil: 3 })
  t.same(SIGNED_MSG_TYPE_NAMES, { SIGNED_MSG_TYPE_UNKNOWN: 0, SIGNED_MSG_TYPE_PREVOTE: 1, SIGNED_MSG_TYPE_PRECOMMIT: 2, SIGNED_MSG_TYPE_PROPOSAL: 32 })
  t.equal(SignedMsgType.Precommit, 2)
  t.equal(MAX_TOTAL_VOTING_POWER, 1152921504606846975n, 'int64 max / 8')
})

t.test('enumByName reads a known name only', async (t) => {
  t.equal(enumByName('BLOCK_ID_FLAG_NIL', BLOCK_ID_FLAG_NAMES), 3)
  t.equal(enumByName('BLOCK_ID_FLAG_OTHER', BLOCK_ID_FLAG_NAMES), undefined)
  t.equal(enumByName('toString', BLOCK_ID_FLAG_NAMES), undefined, 'not an inherited key')
  t.equal(enumByName(2, BLOCK_ID_FLAG_NAMES), undefined, 'a number is the caller\'s to read')
})

t.test('a zero block id has no hash and an empty part set header', async (t) => {
  const none = new Uint8Array()
  t.ok(isZeroBlockId({ hash: none, partSetHeader: { total: 0, hash: none } }))
  t.notOk(isZeroBlockId({ hash: new Uint8Array(32), partSetHeader: { total: 0, hash: none } }))
  t.notOk(isZeroBlockId({ hash: none, partSetHeader: { total: 1, hash: none } }))
  t.notOk(isZeroBlockId({ hash: none, partSetHeader: { total: 0, hash: new Uint8Array(32) } }))
})
