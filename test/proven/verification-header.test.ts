import t from 'tap'
import { VERIFICATION_HEADER, verificationHeader } from '../../src/proven/verification-header.js'

t.test('each X-Verification value, as a client reads it', async (t) => {
  t.equal(VERIFICATION_HEADER, 'x-verification')
  t.equal(verificationHeader({ kind: 'verified', keys: 3 }), 'verified; keys=3')
  t.equal(verificationHeader({ kind: 'unverified', reason: 'range' }), 'unverified; reason="range"')
  t.equal(verificationHeader({ kind: 'unverified', reason: 'not-yet' }), 'unverified; reason="not-yet"')
  t.equal(verificationHeader({ kind: 'unverified', reason: 'pruned' }), 'unverified; reason="pruned"')
  t.equal(verificationHeader({ kind: 'unverified', reason: 'headers-only' }), 'unverified; reason="headers-only"')
  t.equal(verificationHeader({ kind: 'unverified', reason: 'route' }), 'unverified; reason="route"')
  t.equal(verificationHeader({ kind: 'failed' }), 'failed')
})
