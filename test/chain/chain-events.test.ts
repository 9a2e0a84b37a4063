import t from 'tap'
import { eventId, eventsAt, isAfter, parseEventId } from '../../src/chain/chain-events.js'
import type { EpochContext } from '../../src/chain/epoch-stages.js'

const params = { epochLength: 100n, epochShift: 0n, pocStageDuration: 20n, pocExchangeDuration: 2n, pocValidationDelay: 2n, pocValidationDuration: 10n, setNewValidatorsDelay: 5n, inferenceValidationCutoff: 10n }
const anchor: EpochContext = { index: 5n, pocStartBlockHeight: 1000n, params }

t.test('ids are chain coordinates, parsed numerically and ordered', async (t) => {
  t.equal(eventId({ height: 12, n: 0 }), '12')
  t.equal(eventId({ height: 12, n: 2 }), '12.2')
  t.same(parseEventId('12.2'), { height: 12, n: 2 })
  t.same(parseEventId('12'), { height: 12, n: 0 })
  for (const bad of ['', 'abc', '-1', '1.2.3', '1e5', '12.']) t.equal(parseEventId(bad), undefined, bad)
  t.ok(isAfter({ height: 13, n: 0 }, { height: 12, n: 5 }))
  t.ok(isAfter({ height: 12, n: 2 }, { height: 12, n: 1 }))
  t.notOk(isAfter({ height: 12, n: 1 }, { height: 12, n: 1 }))
  t.notOk(isAfter({ height: 11, n: 9 }, { height: 12, n: 0 }))
})

t.test('a head at every height; stage and epoch events where their boundaries fall, in any epoch counted from the anchor', async (t) => {
  t.same(eventsAt(1005, anchor), [{ height: 1005, n: 0, event: 'head', data: { height: 1005 } }])
  t.same(eventsAt(1100, anchor).map((e) => [eventId(e), e.event, e.data]), [
    ['1100', 'head', { height: 1100 }],
    ['1100.1', 'stage', { height: 1100, epoch: 6, stage: 'poc_start', phase: 'PoCGenerate' }],
    ['1100.2', 'epoch', { height: 1100, epoch: 6 }]
  ], 'a new epoch after the anchor')
  t.same(eventsAt(920, anchor).map((e) => e.data), [{ height: 920 }, { height: 920, epoch: 4, stage: 'poc_generation_end', phase: 'PoCGenerateWindDown' }], 'an epoch before it')
  t.same(eventsAt(1090, anchor).map((e) => e.data).at(-1), { height: 1090, epoch: 5, stage: 'inference_validation_cutoff', phase: 'Inference' })
  t.same(eventsAt(1100, undefined).length, 1, 'no anchor: heads only')
  t.same(eventsAt(1100, { ...anchor, params: { ...params, epochLength: 0n } }).length, 1, 'no epoch length: heads only')
  t.same(eventsAt(100, anchor).length, 1, 'before epoch 1: heads only')
  t.same(eventsAt(1100, { ...anchor, index: 0n }).length, 1, 'epoch 0 runs no PoC')
})
