import t from 'tap'
import { ProofError, verifyAbsence, verifyValue, type ProofOp } from '../../src/verify/ics23-proof.js'
import { pathEscape } from '../../src/verify/key-path.js'
import { ics23Vector, VECTOR_NAMES, VECTOR_STORES, type Ics23Vector } from '../fixtures/verify/ics23-vectors.js'

// cosmos/ics23's own vectors (test/fixtures/verify/ics23/README.md), each checked as upstream's
// go/vectors_test.go TestVectors checks it: the root the proof implies is the vector's root, and
// the key holds the value (VerifyMembership) or, for an empty value, is absent
// (VerifyNonMembership). Each runs through the service's verifier as a one-op proof chain, the
// IAVL store's vectors as "ics23:iavl" (IavlSpec), the Tendermint ones as "ics23:simple"
// (TendermintSpec).

const OP_TYPE = { iavl: 'ics23:iavl', tendermint: 'ics23:simple' } as const

/** Checks `v`'s proof against `ref`'s root, key and value (its own unless given). */
function check (type: string, v: Ics23Vector, ref: Omit<Ics23Vector, 'proof'> = v): void {
  const ops: ProofOp[] = [{ type, key: ref.key, data: v.proof }]
  const path = `/${pathEscape(ref.key)}`
  if (ref.value === undefined) verifyAbsence(ops, ref.root, path)
  else verifyValue(ops, ref.root, path, ref.value)
}

t.test('upstream TestVectors: every iavl and tendermint vector verifies under its own spec', async (t) => {
  for (const store of VECTOR_STORES) {
    for (const name of VECTOR_NAMES) {
      const v = ics23Vector(store, name)
      t.equal(name.startsWith('nonexist'), v.value === undefined, `${store}/${name}: a value exactly when it proves existence`)
      t.doesNotThrow(() => { check(OP_TYPE[store], v) }, `${store}/${name}`)
    }
  }
})

t.test('upstream BatchVectorsTestData "invalid 1": a non-existence vector under the other store\'s spec', async (t) => {
  const iavl = ics23Vector('iavl', 'nonexist_right')
  // Its right-child prefixes (4 + 33 bytes) are beyond TendermintSpec's 1 + 32 before any hashing.
  t.throws(() => { check('ics23:simple', iavl) },
    new ProofError('proof of operation #0 exceeds the ics23:simple spec\'s limits: nonexist.left.path[0].prefix is 37 bytes, the spec allows at most 33'), 'iavl invalid 1: IAVL proof, TendermintSpec')
  const tm = ics23Vector('tendermint', 'nonexist_right')
  // Its leaf prefix is 0x00 alone: no IAVL size or version.
  t.throws(() => { check('ics23:iavl', tm) },
    new ProofError('proof of operation #0 does not meet the ics23:iavl spec: left proof, leaf, failed to read IAVL size varint: EOF'), 'tm invalid 1: Tendermint proof, IavlSpec')
})

t.test('every vector under the other store\'s spec: refused before any hashing, with the reason', async (t) => {
  const other = { iavl: 'ics23:simple', tendermint: 'ics23:iavl' } as const
  for (const store of VECTOR_STORES) {
    for (const name of VECTOR_NAMES) {
      t.throws(() => { check(other[store], ics23Vector(store, name)) },
        { name: 'ProofError', message: new RegExp(`^proof of operation #0 (does not meet the ${other[store]} spec|exceeds the ${other[store]} spec's limits): .`) },
        `${store}/${name} as ${other[store]}`)
    }
  }
})

t.test('upstream BatchVectorsTestData "invalid 2": one tree\'s proof, another tree\'s key, value and root', async (t) => {
  for (const [store, other] of [['iavl', 'tendermint'], ['tendermint', 'iavl']] as const) {
    const proof = ics23Vector(store, 'exist_left')
    const ref = ics23Vector(other, 'exist_left')
    t.throws(() => { check(OP_TYPE[store], proof, ref) }, /^key mismatch|^proof did not verify existence/, `${store} proof, ${other}/exist_left's reference`)
  }
})

t.test('a vector that proves existence does not prove absence, nor absence existence', async (t) => {
  for (const store of VECTOR_STORES) {
    const exist = ics23Vector(store, 'exist_middle')
    t.throws(() => { check(OP_TYPE[store], exist, { ...exist, value: undefined }) },
      new ProofError(`proof did not verify absence of key: ${exist.key.toString()}: invalid proof`), `${store}/exist_middle as an absence`)
    const absent = ics23Vector(store, 'nonexist_middle')
    t.throws(() => { check(OP_TYPE[store], absent, { ...absent, value: Buffer.from('v') }) },
      new ProofError(`proof did not verify existence of key ${absent.key.toString()} with given value 76: invalid proof`), `${store}/nonexist_middle as a value`)
  }
})

t.test('a non-existence proof does not prove absent a key outside its neighbours\' range', async (t) => {
  for (const store of VECTOR_STORES) {
    const absent = ics23Vector(store, 'nonexist_middle')
    for (const key of [Buffer.of(0), Buffer.of(0xff, 0xff)]) {
      t.throws(() => { check(OP_TYPE[store], absent, { ...absent, key }) },
        new ProofError(`proof did not verify absence of key: ${key.toString()}: invalid proof`), `${store}: key ${key.toString('hex')}`)
    }
  }
})
