import t from 'tap'
import type { VerifiedCursor } from '../../src/light/cursor.js'
import { blocksBehind, STRICT_MAX_BEHIND_BLOCKS, strictFreshness, type VerifiedSource } from '../../src/light/freshness.js'

// How far V is behind the head, and the strict mode's readiness reason.

const source = (height: number | undefined, best: number, state = 'verifying'): VerifiedSource => ({ verified: { height, state } as unknown as VerifiedCursor, heads: { best } })

t.test('blocks behind: unknown while V or the head is; never negative', async (t) => {
  t.equal(blocksBehind(source(98, 100)), 2)
  t.equal(blocksBehind(source(undefined, 100)), undefined)
  t.equal(blocksBehind(source(98, 0)), undefined)
  t.equal(blocksBehind(source(101, 100)), 0, 'a head told by a node behind the one V came from')
  t.equal(blocksBehind({ verified: undefined, heads: { best: 100 } }), undefined, 'verification off')
})

t.test(`strict readiness: not ready while V is unknown, expired, or more than ${STRICT_MAX_BEHIND_BLOCKS} blocks behind`, async (t) => {
  t.equal(strictFreshness(source(98, 100))(), undefined)
  t.equal(strictFreshness(source(100 - STRICT_MAX_BEHIND_BLOCKS, 100))(), undefined, 'at the bound')
  t.equal(strictFreshness(source(99 - STRICT_MAX_BEHIND_BLOCKS, 100))(), `the verified height is ${STRICT_MAX_BEHIND_BLOCKS + 1} blocks behind the head, more than ${STRICT_MAX_BEHIND_BLOCKS}`)
  t.equal(strictFreshness(source(undefined, 100, 'starting'))(), 'no verified height yet')
  t.equal(strictFreshness(source(98, 100, 'expired'))(), 'the trusted header has expired')
  t.equal(strictFreshness({ verified: undefined, heads: { best: 100 } })(), 'no verified height yet', 'no cursor: never verified')
})
