import t from 'tap'
import { NO_VERIFIED_HASHES } from '../../src/proven/app-hashes.js'

t.test('a replica that follows no headers knows no app hash: every proven read is not-yet', async (t) => {
  t.equal(NO_VERIFIED_HASHES.appHashAfter(1), undefined)
  t.equal(NO_VERIFIED_HASHES.appHashAfter(1_843_200), undefined)
})
