import t from 'tap'
import { decodeOutcome, encodeOutcome } from '../../src/verify/outcome.js'

t.test('an outcome crosses as bytes: bigints and byte arrays intact', async (t) => {
  const outcome = { ok: true, value: { height: 2n ** 62n, key: new Uint8Array([1, 2]) } } as const
  t.same(decodeOutcome(encodeOutcome(outcome)), outcome)
  t.same(decodeOutcome(encodeOutcome({ ok: false, error: 'no' })), { ok: false, error: 'no' })
})

t.test('bytes that cannot be read are an error of the task, thrown where it is awaited', async (t) => {
  t.throws(() => decodeOutcome(new Uint8Array([0xff, 0x0f, 0x6f, 0x7b])), { message: /^the worker's answer could not be read: / })
})
