import t from 'tap'
import { VERIFICATION_MODES } from '../../src/config/verification-settings.js'
import { answerAction, type ProvingOutcome } from '../../src/proven/answer-policy.js'

const VERIFIED: ProvingOutcome = { kind: 'verified', keys: 3 }
const RANGE: ProvingOutcome = { kind: 'unproven', reason: 'range' }
const NOT_YET: ProvingOutcome = { kind: 'unproven', reason: 'not-yet' }
const PRUNED: ProvingOutcome = { kind: 'unproven', reason: 'pruned' }
const FAILED: ProvingOutcome = { kind: 'failed', detail: 'node 2: proof did not verify' }
const ALL = [VERIFIED, RANGE, NOT_YET, PRUNED, FAILED]

t.test('off serves every answer as before, unmarked, whatever proving said', async (t) => {
  for (const outcome of ALL) t.same(answerAction('off', outcome), { serve: true, header: undefined }, outcome.kind)
})

t.test('headers serves every answer marked unverified: nothing is proven in that mode', async (t) => {
  for (const outcome of ALL) t.same(answerAction('headers', outcome), { serve: true, header: 'unverified; reason="headers-only"' }, outcome.kind)
})

t.test('answers serves proven answers verified, the rest marked with the reason, a failed one never', async (t) => {
  t.same(answerAction('answers', VERIFIED), { serve: true, header: 'verified; keys=3' })
  t.same(answerAction('answers', RANGE), { serve: true, header: 'unverified; reason="range"' })
  t.same(answerAction('answers', NOT_YET), { serve: true, header: 'unverified; reason="not-yet"' })
  t.same(answerAction('answers', PRUNED), { serve: true, header: 'unverified; reason="pruned"' })
  t.same(answerAction('answers', FAILED), { serve: false, status: 503, header: 'failed', message: 'no chain node gave an answer that verifies: node 2: proof did not verify' })
})

t.test('strict serves only verified answers; anything else is a 503 naming the reason', async (t) => {
  t.same(answerAction('strict', VERIFIED), { serve: true, header: 'verified; keys=3' })
  for (const outcome of [RANGE, NOT_YET, PRUNED]) {
    const action = answerAction('strict', outcome)
    t.match(action, { serve: false, status: 503, header: `unverified; reason="${(outcome as { reason: string }).reason}"` }, outcome.kind)
    t.match(action, { message: new RegExp(`only verified answers; this one is not \\(${(outcome as { reason: string }).reason}\\)`) })
  }
  t.match(answerAction('strict', FAILED), { serve: false, status: 503, header: 'failed' })
})

t.test('an unverified body is served only where the mode allows it', async (t) => {
  for (const mode of VERIFICATION_MODES) {
    for (const outcome of ALL) {
      const action = answerAction(mode, outcome)
      if (mode === 'strict' && outcome.kind !== 'verified') t.notOk(action.serve, `strict, ${outcome.kind}: not served`)
      if (outcome.kind === 'failed' && (mode === 'answers' || mode === 'strict')) t.notOk(action.serve, `${mode}, failed: not served`)
    }
  }
})
