import { iavlSpec, ics23, tendermintSpec, verifyMembership } from '@confio/ics23'
import { applyInner, applyLeaf } from '@confio/ics23/build/ops.js'
import t from 'tap'
import { ProofError, verifyAbsence, verifyValue, type ProofOp } from '../../src/verify/ics23-proof.js'
import { pathEscape } from '../../src/verify/key-path.js'
import { keyShiftForgery } from '../fixtures/verify/hostile.js'

// Forged proofs, each refused by the service's verifier with a named reason. Most are
// self-consistent (their root is the one they imply), so nothing but the check named refuses
// them; where @confio/ics23 0.6.8 alone would accept one, the test says so first.

const SHA256 = ics23.HashOp.SHA256
/** Zigzag varints, as IAVL writes a node's height, size and version. */
const zz = (...values: number[]): Buffer => Buffer.from(values.flatMap((v) => {
  const bytes: number[] = []
  let unsigned = v >= 0 ? 2 * v : -2 * v - 1
  for (; unsigned >= 0x80; unsigned = Math.floor(unsigned / 0x80)) bytes.push((unsigned & 0x7f) | 0x80)
  return [...bytes, unsigned]
}))
const leafOf = (spec: ics23.IProofSpec, prefix: Uint8Array): ics23.ILeafOp => ({ ...spec.leafSpec, prefix })
const iavlLeaf = (version: number): ics23.ILeafOp => leafOf(iavlSpec, zz(0, 1, version))
/** An IAVL inner node, the child from the left: height, size, version, the child's length byte; the right child as suffix. */
const fromLeft = (height: number, size: number, version = 3): ics23.IInnerOp =>
  ({ hash: SHA256, prefix: Buffer.concat([zz(height, size, version), Buffer.of(0x20)]), suffix: Buffer.concat([Buffer.of(0x20), Buffer.alloc(32, height)]) })
const KEY = Buffer.from('k')
const VALUE = Buffer.from('v')

function rootOf (exist: ics23.IExistenceProof): Uint8Array {
  let hash = applyLeaf(exist.leaf as ics23.ILeafOp, exist.key as Uint8Array, exist.value as Uint8Array)
  for (const inner of exist.path ?? []) hash = applyInner(inner, hash)
  return hash
}
const existence = (leaf: ics23.ILeafOp, path: ics23.IInnerOp[]): ics23.IExistenceProof => ({ key: KEY, value: VALUE, leaf, path })
const encode = (proof: ics23.ICommitmentProof): Uint8Array => ics23.CommitmentProof.encode(proof).finish()

/** Verifies `exist` as a one-op chain of `type` against the root it implies. */
function verifyAlone (type: 'ics23:iavl' | 'ics23:simple', exist: ics23.IExistenceProof): void {
  verifyValue([{ type, key: KEY, data: encode({ exist }) }], rootOf(exist), `/${pathEscape(KEY)}`, VALUE)
}
const specRefusal = (type: string, reason: string): ProofError => new ProofError(`proof of operation #0 does not meet the ${type} spec: ${reason}`)
const acceptedBy068 = (exist: ics23.IExistenceProof, spec: ics23.IProofSpec): boolean => verifyMembership({ exist }, spec, rootOf(exist), KEY, VALUE)

t.test('the Dragonberry class: an IAVL leaf prefix that swallows part of a real key proves a key the store does not hold', async (t) => {
  // The target (epoch 43's active participants) is not in the store; "u/" ‖ len ‖ target is.
  const target = Buffer.concat([Buffer.from('ActiveParticipants/value/'), Buffer.from('000000000000002b', 'hex'), Buffer.from('/')])
  const { appHash, real, honest, forged } = keyShiftForgery(target, VALUE)
  verifyValue(honest, appHash, `/inference/${pathEscape(real)}`, VALUE)
  t.pass('the real key verifies')
  const decoded = (ops: ProofOp[]): ics23.IExistenceProof => ics23.CommitmentProof.decode((ops[0] as ProofOp).data).exist as ics23.IExistenceProof
  const iavlRoot = rootOf(decoded(honest))
  t.same(rootOf(decoded(forged)), iavlRoot, 'the forged leaf hashes to the real one')
  t.ok(verifyMembership({ exist: decoded(forged) }, iavlSpec, iavlRoot, target, VALUE), '@confio/ics23 0.6.8 alone proves the target key holds the value')
  t.throws(() => { verifyValue(forged, appHash, `/inference/${pathEscape(target)}`, VALUE) },
    specRefusal('ics23:iavl', 'leaf, expected remaining prefix length to be 0, got: 3'))
})

t.test('IAVL leaf ops: only height 0, size 1, a version', async (t) => {
  // A height other than 0 changes the first byte, which 0.6.8 does check (the spec's leaf prefix 0x00).
  const cases: Array<[string, ics23.ILeafOp, string, boolean]> = [
    ['a leaf claiming height 1', leafOf(iavlSpec, zz(1, 1, 3)), 'leaf, expected leaf node height to be 0, got: 1', false],
    ['a leaf claiming size 2', leafOf(iavlSpec, zz(0, 2, 3)), 'leaf, expected leaf node size to be 1, got: 2', true],
    ['a negative version', leafOf(iavlSpec, zz(0, 1, -1)), 'leaf, IAVL version must be non-negative', true],
    ['a prefix of the spec\'s 0x00 alone', leafOf(iavlSpec, Buffer.of(0)), 'leaf, failed to read IAVL size varint: EOF', true]
  ]
  for (const [name, leaf, reason, passes068] of cases) {
    const exist = existence(leaf, [fromLeft(1, 2)])
    t.equal(acceptedBy068(exist, iavlSpec), passes068, `${name}: @confio/ics23 0.6.8 alone ${passes068 ? 'accepts' : 'refuses'} it`)
    t.throws(() => { verifyAlone('ics23:iavl', exist) }, specRefusal('ics23:iavl', reason), name)
  }
})

t.test('IAVL inner ops: the prefix length rule, the leaf prefix, whole children in the suffix', async (t) => {
  const inner = (prefix: Uint8Array, suffix: Uint8Array = new Uint8Array()): ics23.IInnerOp => ({ hash: SHA256, prefix, suffix })
  const cases: Array<[string, ics23.IInnerOp, string, boolean]> = [
    ['a prefix two bytes after the version (neither 1 nor 34)', inner(Buffer.concat([zz(1, 2, 3), Buffer.of(0x20, 0x20)]), Buffer.alloc(33)), 'inner, remainder of prefix must be of length 1 or 34, got: 2', true],
    ['a prefix too short: no length byte', inner(zz(1, 2, 3), Buffer.alloc(33)), 'inner, remainder of prefix must be of length 1 or 34, got: 0', false],
    ['a prefix that starts with the leaf prefix 0x00', inner(Buffer.concat([Buffer.of(0), zz(2, 3), Buffer.of(0x20)]), Buffer.alloc(33)), 'inner, IAVL height (0) must be non-negative and greater than or equal to the layer number (1)', false],
    ['a node lower than its layer', inner(Buffer.concat([zz(-3, 2, 3), Buffer.of(0x20)]), Buffer.alloc(33)), 'inner, IAVL height (-3) must be non-negative and greater than or equal to the layer number (1)', true],
    ['a suffix of 5 bytes', inner(Buffer.concat([zz(1, 2, 3), Buffer.of(0x20)]), Buffer.alloc(5)), 'inner, InnerOp suffix malformed', true]
  ]
  for (const [name, op, reason, passes068] of cases) {
    const exist = existence(iavlLeaf(3), [op])
    t.equal(acceptedBy068(exist, iavlSpec), passes068, `${name}: @confio/ics23 0.6.8 alone ${passes068 ? 'accepts' : 'refuses'} it`)
    t.throws(() => { verifyAlone('ics23:iavl', exist) }, specRefusal('ics23:iavl', reason), name)
  }
  const tooLong = existence(iavlLeaf(3), [inner(Buffer.concat([zz(1, 2, 3), Buffer.alloc(43)]))])
  t.throws(() => { verifyAlone('ics23:iavl', tooLong) },
    new ProofError('proof of operation #0 exceeds the ics23:iavl spec\'s limits: exist.path[0].prefix is 46 bytes, the spec allows at most 45'), 'a prefix too long: refused before any hashing')
})

t.test('Tendermint inner ops: 0x01, then the left child or nothing', async (t) => {
  const cases: Array<[string, ics23.IInnerOp, string]> = [
    ['the leaf prefix 0x00 as the whole inner prefix', { hash: SHA256, prefix: Buffer.of(0), suffix: Buffer.alloc(32, 7) }, 'inner, expected inner op prefix: [1], got: [0]'],
    ['a right child whose prefix starts with 2', { hash: SHA256, prefix: Buffer.concat([Buffer.of(2), Buffer.alloc(32, 7)]) }, 'inner, expected inner op prefix to begin with: [1], got: [2]'],
    ['a left child with bytes after 0x01', { hash: SHA256, prefix: Buffer.of(1, 9), suffix: Buffer.alloc(32, 7) }, 'inner, expected inner op prefix: [1], got: [1 9]']
  ]
  for (const [name, op, reason] of cases) {
    const exist = existence(tendermintSpec.leafSpec as ics23.ILeafOp, [op])
    t.ok(acceptedBy068(exist, tendermintSpec), `${name}: @confio/ics23 0.6.8 alone accepts it`)
    t.throws(() => { verifyAlone('ics23:simple', exist) }, specRefusal('ics23:simple', reason), name)
  }
})

t.test('too many levels: 128 inner ops verify, 129 are refused (0.6.8 has no bound)', async (t) => {
  const path = (depth: number): ics23.IInnerOp[] => Array.from({ length: depth }, (_, i) => fromLeft(i + 1, i + 2))
  verifyAlone('ics23:iavl', existence(iavlLeaf(3), path(128)))
  t.pass('128 levels')
  const deep = existence(iavlLeaf(3), path(129))
  t.ok(acceptedBy068(deep, iavlSpec), '129 levels: @confio/ics23 0.6.8 alone accepts them')
  t.throws(() => { verifyAlone('ics23:iavl', deep) }, specRefusal('ics23:iavl', 'innerOps depth too long: 129'))
})

t.test('a non-existence proof whose neighbour is forged', async (t) => {
  const right = { ...existence(leafOf(iavlSpec, zz(0, 2, 3)), [fromLeft(1, 2)]), key: Buffer.from('m') }
  t.throws(() => { verifyAbsence([{ type: 'ics23:iavl', key: KEY, data: encode({ nonexist: { key: KEY, right } }) }], rootOf(right), `/${pathEscape(KEY)}`) },
    specRefusal('ics23:iavl', 'right proof, leaf, expected leaf node size to be 1, got: 2'))
})

t.test('a real proof under the wrong key path', async (t) => {
  const exist = existence(iavlLeaf(3), [fromLeft(1, 2)])
  const other = Buffer.from('j')
  t.throws(() => { verifyValue([{ type: 'ics23:iavl', key: KEY, data: encode({ exist }) }], rootOf(exist), `/${pathEscape(other)}`, VALUE) },
    new ProofError('key mismatch on operation #0: expected j but got k'))
})
