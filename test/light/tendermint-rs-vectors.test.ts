import t from 'tap'
import { DEFAULT_TRUST_LEVEL } from '../../src/light/commit-light.js'
import type { TrustedState } from '../../src/light/light-block.js'
import type { LightFailure } from '../../src/light/verdict.js'
import { verifyLightBlock } from '../../src/light/verifier.js'
import { time, validatorSet } from '../fixtures/light/light-block-json.js'
import { singleStepCases, type Verdict } from '../fixtures/light/vectors.js'

// tendermint-rs's single-step light-client cases (test/fixtures/light/tendermint-rs/README.md),
// driven as its light-client/tests/model_based.rs single_step_test drives them: the initial
// header trusted with its next_validator_set; trusting period from the file, clock drift 0,
// trust level 1/3; each step checked at its own `now` against the latest trusted block, which
// a SUCCESS replaces. Every step must reach exactly upstream's verdict. tendermint-rs counts
// an expired trusted header as Invalid (NotWithinTrustPeriod); we tell it apart as 'expired'.
// Its generated headers carry no last_block_id, and its verifier (like CometBFT's) does not
// check one, so linkLastBlockId is off here (LightOptions says why it exists).

const UPSTREAM: Record<LightFailure, Verdict> = { invalid: 'INVALID', expired: 'INVALID', 'not-enough-trust': 'NOT_ENOUGH_TRUST' }

t.test('every step of every vendored case reaches tendermint-rs\'s verdict', async (t) => {
  const seen = new Set<string>()
  let steps = 0
  for (const c of singleStepCases()) {
    let trusted: TrustedState = { header: c.initial.header, nextValidators: validatorSet(c.initialNextValidators) }
    const options = { trustingPeriodMs: Number(c.trustingPeriod / 1_000_000n), maxClockDriftMs: 0, trustLevel: DEFAULT_TRUST_LEVEL, linkLastBlockId: false }
    for (const [i, step] of c.steps.entries()) {
      const verdict = verifyLightBlock(trusted, step.block, time(step.now), options)
      const got = verdict.ok ? 'SUCCESS' : UPSTREAM[verdict.kind]
      t.equal(got, step.verdict, `${c.name} step ${i} (height ${step.block.signedHeader.header.height})${verdict.ok ? '' : `: ${verdict.reason}`}`)
      seen.add(verdict.ok ? 'SUCCESS' : verdict.kind)
      if (verdict.ok) trusted = { header: step.block.signedHeader.header, nextValidators: step.block.nextValidators }
      steps++
    }
  }
  t.ok(steps >= 40, `${steps} steps`)
  t.same([...seen].sort(), ['SUCCESS', 'expired', 'invalid', 'not-enough-trust'], 'the cases reach every outcome')
})
