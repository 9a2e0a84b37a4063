import { createHash } from 'node:crypto'
import t from 'tap'
import { MAX_TOTAL_VOTING_POWER } from '../../src/cometbft/types.js'
import { newValidatorSet, ValidatorSetError } from '../../src/cometbft/validator-set.js'

const key = (name: string): Uint8Array => createHash('sha256').update(name).digest()
const address = (pubKey: Uint8Array): string => createHash('sha256').update(pubKey).digest().subarray(0, 20).toString('hex').toUpperCase()

t.test('CometBFT\'s order: voting power descending, then address ascending', async (t) => {
  const inputs = ['a', 'b', 'c', 'd', 'e'].map((name, i) => ({ pubKey: key(name), votingPower: [5n, 9n, 5n, 1n, 5n][i] as bigint }))
  const set = newValidatorSet(inputs)
  t.equal(set.totalVotingPower, 25n)
  t.same(set.validators.map((v) => v.votingPower), [9n, 5n, 5n, 5n, 1n])
  const fives = set.validators.slice(1, 4).map((v) => Buffer.from(v.address).toString('hex').toUpperCase())
  t.same(fives, [...fives].sort(), 'equal powers by address')
  t.equal(Buffer.from(set.validators[0]?.address as Uint8Array).toString('hex').toUpperCase(), address(key('b')), 'address = SHA-256(key)[:20]')
  t.same(newValidatorSet([]), { validators: [], totalVotingPower: 0n }, 'an empty set is a set')
})

t.test('powers beyond 2^53 stay exact', async (t) => {
  const big = MAX_TOTAL_VOTING_POWER - 1n
  const set = newValidatorSet([{ pubKey: key('x'), votingPower: big }, { pubKey: key('y'), votingPower: 1n }])
  t.equal(set.totalVotingPower, MAX_TOTAL_VOTING_POWER)
  t.equal(MAX_TOTAL_VOTING_POWER, 1152921504606846975n)
})

t.test('what CometBFT refuses to build', async (t) => {
  const cases: Array<[string, Array<{ pubKey: Uint8Array, votingPower: bigint }>, RegExp]> = [
    ['a short key', [{ pubKey: key('a').subarray(1), votingPower: 1n }], /^pubkey is incorrect size$/],
    ['a duplicate', [{ pubKey: key('a'), votingPower: 1n }, { pubKey: key('a'), votingPower: 2n }], new RegExp(`^duplicate entry ${address(key('a'))}$`)],
    ['a negative power', [{ pubKey: key('a'), votingPower: -1n }], /^voting power can't be negative: -1$/],
    ['a power over the cap', [{ pubKey: key('a'), votingPower: MAX_TOTAL_VOTING_POWER + 1n }],
      /^to prevent clipping\/overflow, voting power can't be higher than 1152921504606846975, got 1152921504606846976$/],
    ['power 0 (a removal to CometBFT)', [{ pubKey: key('a'), votingPower: 1n }, { pubKey: key('b'), votingPower: 0n }],
      new RegExp(`^cannot process validators with voting power 0: \\[${address(key('b'))}\\]$`)],
    ['a total over the cap', [{ pubKey: key('a'), votingPower: MAX_TOTAL_VOTING_POWER }, { pubKey: key('b'), votingPower: 1n }],
      /^total voting power of resulting valset exceeds max 1152921504606846975$/]
  ]
  for (const [name, inputs, message] of cases) t.throws(() => newValidatorSet(inputs), { name: 'ValidatorSetError', message }, name)
  t.ok(new ValidatorSetError('x') instanceof Error)
})
