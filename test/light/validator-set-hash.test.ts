import { createHash } from 'node:crypto'
import t from 'tap'
import { newValidatorSet, type Validator } from '../../src/cometbft/validator-set.js'
import { validatorSetHash } from '../../src/light/validator-set-hash.js'
import { validatorSet } from '../fixtures/light/light-block-json.js'
import { singleStepCases } from '../fixtures/light/vectors.js'
import { testSigners } from '../fixtures/verify/signed-commit.js'

const sha = (...parts: Uint8Array[]): Buffer => createHash('sha256').update(Buffer.concat(parts)).digest()
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex').toUpperCase()

t.test('every set of the tendermint-rs vectors hashes to the header\'s validators_hash and next_validators_hash', async (t) => {
  let sets = 0
  for (const c of singleStepCases()) {
    t.equal(hex(validatorSetHash(validatorSet(c.initialNextValidators))), hex(c.initial.header.nextValidatorsHash), `${c.name}: the initial next set`)
    for (const { block, verdict } of c.steps) {
      const { header } = block.signedHeader
      t.equal(hex(validatorSetHash(block.validators)), hex(header.validatorsHash), `${c.name} height ${header.height} (${verdict}): validators`)
      t.equal(hex(validatorSetHash(block.nextValidators)), hex(header.nextValidatorsHash), `${c.name} height ${header.height}: next validators`)
      sets += 2
    }
  }
  t.ok(sets >= 60, `${sets} sets`)
})

t.test('each leaf is a SimpleValidator {PublicKey{ed25519}, voting_power}, written out by hand', async (t) => {
  // testSigners gives them in the set's order: power descending.
  const [big, small] = testSigners('hash', [10n, 300n])
  const leaf = (key: Uint8Array, power: number[]): Buffer => sha(Buffer.of(0), Buffer.of(0x0a, 0x22, 0x0a, 0x20), key, Buffer.of(0x10, ...power))
  // 300 is the varint ac 02.
  const expected = sha(Buffer.of(1), leaf(big?.pubKey as Uint8Array, [0xac, 0x02]), leaf(small?.pubKey as Uint8Array, [10]))
  const set = newValidatorSet([small, big].map((s) => ({ pubKey: s?.pubKey as Uint8Array, votingPower: s?.power as bigint })))
  t.equal(hex(validatorSetHash(set)), hex(expected))
  t.equal(hex(validatorSetHash(newValidatorSet([]))), hex(sha()), 'an empty set: SHA-256 of nothing')
})

t.test('what the hash commits to: keys and powers, in the set\'s order, not the order given', async (t) => {
  const signers = testSigners('order', [5n, 7n, 7n, 1n])
  const inputs = signers.map((s) => ({ pubKey: s.pubKey, votingPower: s.power }))
  const hash = hex(validatorSetHash(newValidatorSet(inputs)))
  t.equal(hex(validatorSetHash(newValidatorSet([...inputs].reverse()))), hash, 'given in another order, sorted as CometBFT sorts')
  t.not(hex(validatorSetHash(newValidatorSet(inputs.map((v, i) => i === 0 ? { ...v, votingPower: v.votingPower + 1n } : v)))), hash, 'a power')
  t.not(hex(validatorSetHash(newValidatorSet(inputs.slice(1)))), hash, 'a validator left out')
  const other = testSigners('other', [7n])[0]
  t.not(hex(validatorSetHash(newValidatorSet(inputs.map((v, i) => i === 1 ? { ...v, pubKey: other?.pubKey as Uint8Array } : v)))), hash, 'a key')
})

t.test('a set object is hashed once: the follower meets the same set at every block', async (t) => {
  const signers = testSigners('once', [3n, 2n])
  const set = newValidatorSet(signers.map((s) => ({ pubKey: s.pubKey, votingPower: s.power })))
  const first = validatorSetHash(set)
  // Changed behind the type's back (a ValidatorSet is never changed once built): the hash is
  // the one computed before, so nothing was hashed again.
  ;(set.validators as Validator[]).pop()
  t.equal(hex(validatorSetHash(set)), hex(first))
  validatorSetHash(set).fill(0)
  t.equal(hex(validatorSetHash(set)), hex(first), 'a caller writing into the hash it got changes no one else\'s')
})
