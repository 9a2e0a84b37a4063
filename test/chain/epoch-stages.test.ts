import t from 'tap'
import { currentPhase, epochStages, nextEpochContext, type EpochContext, type EpochParams } from '../../src/chain/epoch-stages.js'

// Mainnet-like params: a 60-block PoC stage (wind-down at floor(60*0.8) = 48) and a
// 120-block validation (wind-down at floor(120*0.8) = 96).
const PARAMS: EpochParams = {
  epochLength: 15391n,
  epochShift: 16980n,
  pocStageDuration: 60n,
  pocExchangeDuration: 5n,
  pocValidationDelay: 5n,
  pocValidationDuration: 120n,
  setNewValidatorsDelay: 120n,
  inferenceValidationCutoff: 80n
}
const A = 1411936n
const EPOCH_91: EpochContext = { index: 91n, pocStartBlockHeight: A, params: PARAMS }

t.test('stages of an epoch, computed by hand from the anchor 1411936', async (t) => {
  t.same(epochStages(EPOCH_91), {
    epoch_index: 91,
    poc_start: 1411936,
    poc_generation_wind_down: 1411984, // A + 48
    poc_generation_end: 1411996, // A + 60
    poc_validation_start: 1412001, // A + 60 + 5
    poc_validation_wind_down: 1412097, // validation start + 96
    poc_validation_end: 1412121, // validation start + 120
    set_new_validators: 1412241, // validation end + 120
    claim_money: 1412242, // set new validators + 1
    inference_validation_cutoff: 1427247, // next PoC start - 80
    next_poc_start: 1427327, // A + 15391
    poc_exchange_window: { start: 1411937, end: 1412001 }, // (A, A + 60 + 5]
    poc_validation_exchange_window: { start: 1412002, end: 1412121 }
  })
})

t.test('keys and their order are Go\'s EpochStages json tags', async (t) => {
  t.same(Object.keys(epochStages(EPOCH_91)), [
    'epoch_index', 'poc_start', 'poc_generation_wind_down', 'poc_generation_end', 'poc_validation_start',
    'poc_validation_wind_down', 'poc_validation_end', 'set_new_validators', 'claim_money',
    'inference_validation_cutoff', 'next_poc_start', 'poc_exchange_window', 'poc_validation_exchange_window'
  ])
})

t.test('the phase at every boundary', async (t) => {
  const cases: Array<[bigint, string]> = [
    [A - 1n, 'Inference'], // before the anchor: the chain's safe default
    [A, 'PoCGenerate'],
    [A + 47n, 'PoCGenerate'],
    [A + 48n, 'PoCGenerateWindDown'],
    [A + 64n, 'PoCGenerateWindDown'],
    [A + 65n, 'PoCValidate'],
    [A + 65n + 95n, 'PoCValidate'],
    [A + 65n + 96n, 'PoCValidateWindDown'],
    [A + 65n + 119n, 'PoCValidateWindDown'],
    [A + 65n + 120n, 'Inference'],
    [1427326n, 'Inference'],
    [1427327n, 'Inference'] // the next epoch's PoC start is still this epoch's Inference
  ]
  for (const [height, phase] of cases) t.equal(currentPhase(EPOCH_91, height), phase, `height ${height}`)
})

t.test('wind-down truncates like Go\'s int64(float64(d) * 0.8)', async (t) => {
  const odd: EpochContext = { index: 1n, pocStartBlockHeight: 100n, params: { ...PARAMS, pocStageDuration: 7n, pocValidationDuration: 9n, pocValidationDelay: 0n, pocExchangeDuration: 0n } }
  const stages = epochStages(odd)
  t.equal(stages.poc_generation_wind_down, 105, '7 * 0.8 = 5.6 → 5')
  t.equal(stages.poc_validation_start, 107)
  t.equal(stages.poc_validation_wind_down, 114, '9 * 0.8 = 7.2 → 7')
  t.equal(currentPhase(odd, 104n), 'PoCGenerate')
  t.equal(currentPhase(odd, 105n), 'PoCGenerateWindDown')
  const negative: EpochContext = { index: 1n, pocStartBlockHeight: 100n, params: { ...PARAMS, pocStageDuration: -7n } }
  t.equal(epochStages(negative).poc_generation_wind_down, 95, '-5.6 truncates toward zero: -5')
})

t.test('epoch 0 runs no PoC: every stage 0 except next_poc_start and the cutoff', async (t) => {
  const genesis: EpochContext = { index: 0n, pocStartBlockHeight: 0n, params: PARAMS }
  t.same(epochStages(genesis), {
    epoch_index: 0,
    poc_start: 0,
    poc_generation_wind_down: 0,
    poc_generation_end: 0,
    poc_validation_start: 0,
    poc_validation_wind_down: 0,
    poc_validation_end: 0,
    set_new_validators: 0,
    claim_money: 0,
    inference_validation_cutoff: -1669, // next PoC start - 80
    next_poc_start: -1589, // -epoch_shift + epoch_length = -16980 + 15391
    poc_exchange_window: { start: 0, end: 0 },
    poc_validation_exchange_window: { start: 0, end: 0 }
  })
  for (const height of [0n, 60n, 1000n]) t.equal(currentPhase(genesis, height), 'Inference', `height ${height}`)
  const anchored: EpochContext = { index: 0n, pocStartBlockHeight: 500n, params: PARAMS }
  t.equal(epochStages(anchored).poc_start, 0, 'the recorded anchor is ignored in epoch 0')
  t.equal(currentPhase(anchored, 510n), 'Inference')
})

t.test('the next epoch starts at the next PoC start with the same params', async (t) => {
  const next = nextEpochContext(EPOCH_91)
  t.same(next, { index: 92n, pocStartBlockHeight: 1427327n, params: PARAMS })
  t.equal(epochStages(next).next_poc_start, 1442718)
  const afterGenesis = nextEpochContext({ index: 0n, pocStartBlockHeight: 0n, params: PARAMS })
  t.same(afterGenesis, { index: 1n, pocStartBlockHeight: -1589n, params: PARAMS })
})

t.test('64-bit values stay exact and wrap as Go\'s int64/uint64 do', async (t) => {
  const huge: EpochContext = { index: 18446744073709551615n, pocStartBlockHeight: 9223372036854775000n, params: PARAMS }
  const stages = epochStages(huge)
  t.equal(stages.epoch_index, 18446744073709551615n)
  t.equal(stages.poc_start, 9223372036854775000n)
  t.equal(stages.poc_generation_end, 9223372036854775060n)
  t.equal(stages.set_new_validators, 9223372036854775305n)
  t.equal(stages.next_poc_start, -9223372036854761225n, 'A + 15391 overflows int64 and wraps')
  t.same(nextEpochContext(huge).index, 0n, 'uint64 epoch index wraps to 0')
  t.equal(currentPhase(huge, 9223372036854775807n), 'Inference', 'past the validation end')
  t.equal(currentPhase(huge, 9223372036854775010n), 'PoCGenerate')
})

t.test('a params set of zeros gives the Go answer, not an error', async (t) => {
  const zero: EpochParams = {
    epochLength: 0n,
    epochShift: 0n,
    pocStageDuration: 0n,
    pocExchangeDuration: 0n,
    pocValidationDelay: 0n,
    pocValidationDuration: 0n,
    setNewValidatorsDelay: 0n,
    inferenceValidationCutoff: 0n
  }
  const ctx: EpochContext = { index: 3n, pocStartBlockHeight: 10n, params: zero }
  t.equal(currentPhase(ctx, 10n), 'Inference', 'every window is empty')
  t.equal(epochStages(ctx).claim_money, 11)
})
