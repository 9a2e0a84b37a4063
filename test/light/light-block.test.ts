import t from 'tap'
import { DEFAULT_TRUST_LEVEL } from '../../src/light/commit-light.js'
import { followerOptions, trustedStateOf } from '../../src/light/light-block.js'
import { honestChain } from '../fixtures/light/test-chain.js'
import { testSigners } from '../fixtures/verify/signed-commit.js'

t.test('a verified block is trusted with its header and the set it names as the next', async (t) => {
  const first = testSigners('a', [1n])
  const second = testSigners('b', [1n])
  const [block] = honestChain([first, second])
  const state = trustedStateOf(block as NonNullable<typeof block>)
  t.equal(state.header, block?.signedHeader.header)
  t.equal(state.nextValidators, block?.nextValidators)
  t.same(state.nextValidators.validators.map((v) => v.pubKey), second.map((s) => s.pubKey), 'the next set, not its own')
})

t.test('a follower of a real chain checks the last block ID, with CometBFT\'s drift and trust level', async (t) => {
  t.same(followerOptions(3_600_000), { trustingPeriodMs: 3_600_000, maxClockDriftMs: 10_000, trustLevel: DEFAULT_TRUST_LEVEL, linkLastBlockId: true })
})
