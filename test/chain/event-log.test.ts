import t from 'tap'
import { ChainEventLog } from '../../src/chain/event-log.js'
import type { EpochContext } from '../../src/chain/epoch-stages.js'

const params = { epochLength: 100n, epochShift: 0n, pocStageDuration: 20n, pocExchangeDuration: 2n, pocValidationDelay: 2n, pocValidationDuration: 10n, setNewValidatorsDelay: 5n, inferenceValidationCutoff: 10n }

t.test('each height worked out once while kept; none kept without an anchor', async (t) => {
  let asked = 0
  const chain: { anchor?: EpochContext } = {}
  const log = new ChainEventLog({ at: async () => { asked++; return chain.anchor } }, 3)
  t.equal((await log.at(1100)).length, 1, 'no anchor: the head only')
  chain.anchor = { index: 5n, pocStartBlockHeight: 1000n, params }
  t.equal((await log.at(1100)).length, 3, 'asked again once an anchor is known')
  await log.at(1100)
  t.equal(asked, 2, 'then kept')
  await log.at(1101)
  await log.at(1104)
  await log.at(1100)
  t.equal(asked, 5, 'beyond `keep` heights of the newest: worked out again')
})
