import t from 'tap'
import { LightVerificationError, VERIFIED, verdictOf } from '../../src/light/verdict.js'

t.test('verdictOf: a check that returns is verified; a LightVerificationError is its verdict', async (t) => {
  t.same(verdictOf(() => {}), VERIFIED)
  t.same(verdictOf(() => { throw new LightVerificationError('not-enough-trust', 'too little') }), { ok: false, kind: 'not-enough-trust', reason: 'too little' })
  t.equal(new LightVerificationError('expired', 'x').name, 'LightVerificationError')
})

t.test('any other error is a bug, not a verdict about the block: it is thrown on', async (t) => {
  t.throws(() => verdictOf(() => { throw new TypeError('broken') }), { name: 'TypeError', message: 'broken' })
})
