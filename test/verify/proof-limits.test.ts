import { iavlSpec, tendermintSpec, type ics23 } from '@confio/ics23'
import t from 'tap'
import { ProofError, verifyValue } from '../../src/verify/ics23-proof.js'
import { pathEscape } from '../../src/verify/key-path.js'
import { MAX_BATCH_ENTRIES, MAX_PROOF_DEPTH, proofLimitProblem } from '../../src/verify/proof-limits.js'
import { amplifiedProofBody } from '../fixtures/verify/hostile.js'
import { storeKey } from '../../harness/chain-simulator/data/epochs.js'

const inner = (prefix: number, suffix = 0): ics23.IInnerOp => ({ hash: 1, prefix: new Uint8Array(prefix), suffix: new Uint8Array(suffix) })
const exist = (path: ics23.IInnerOp[]): ics23.IExistenceProof => ({ key: Uint8Array.of(1), value: Uint8Array.of(1), path })
const ok = exist([inner(4, 33), inner(45)])

t.test('the ics23 specs\' own bounds: IAVL inner prefixes up to 12 + 33 bytes, suffixes up to 33; Tendermint 1 + 32 and 32', async (t) => {
  t.equal(proofLimitProblem({ exist: ok }, iavlSpec), undefined)
  t.equal(proofLimitProblem({ exist: exist([inner(46)]) }, iavlSpec), 'exist.path[0].prefix is 46 bytes, the spec allows at most 45')
  t.equal(proofLimitProblem({ exist: exist([inner(4, 34)]) }, iavlSpec), 'exist.path[0].suffix is 34 bytes, the spec allows at most 33')
  t.equal(proofLimitProblem({ exist: exist([inner(33, 32)]) }, tendermintSpec), undefined)
  t.equal(proofLimitProblem({ exist: exist([inner(1), inner(34)]) }, tendermintSpec), 'exist.path[1].prefix is 34 bytes, the spec allows at most 33')
  t.equal(proofLimitProblem({ exist: { key: Uint8Array.of(1) } }, iavlSpec), undefined, 'no path: nothing to hash but the leaf')
  t.equal(proofLimitProblem({ exist: exist([{ hash: 1 }]) }, iavlSpec), undefined, 'no prefix or suffix: ics23 refuses it')
  t.equal(proofLimitProblem({}, iavlSpec), undefined, 'no proof at all: ics23 refuses it')
})

t.test('a path deeper than any ics23 spec allows', async (t) => {
  t.equal(MAX_PROOF_DEPTH, 256)
  const deep = exist(Array.from({ length: 257 }, () => inner(4)))
  t.equal(proofLimitProblem({ exist: deep }, iavlSpec), 'exist.path has 257 steps, at most 256')
  t.equal(proofLimitProblem({ nonexist: { left: ok, right: deep } }, iavlSpec), 'nonexist.right.path has 257 steps, at most 256')
  t.equal(proofLimitProblem({ nonexist: { left: exist([inner(99)]) } }, iavlSpec), 'nonexist.left.path[0].prefix is 99 bytes, the spec allows at most 45')
  t.equal(proofLimitProblem({ nonexist: {} }, iavlSpec), undefined)
})

t.test('batch proofs: entries counted, each entry checked', async (t) => {
  t.equal(MAX_BATCH_ENTRIES, 256)
  t.equal(proofLimitProblem({ batch: { entries: Array.from({ length: 257 }, () => ({ exist: ok })) } }, iavlSpec), 'batch has 257 entries, at most 256')
  t.equal(proofLimitProblem({ batch: { entries: [{ exist: ok }, { nonexist: { right: exist([inner(4, 40)]) } }] } }, iavlSpec),
    'batch.entries[1].nonexist.right.path[0].suffix is 40 bytes, the spec allows at most 33')
  t.equal(proofLimitProblem({ batch: { entries: [{ exist: exist([inner(50)]) }] } }, iavlSpec), 'batch.entries[0].exist.path[0].prefix is 50 bytes, the spec allows at most 45')
  t.equal(proofLimitProblem({ batch: { entries: [{}] } }, iavlSpec), undefined)
  t.equal(proofLimitProblem({ batch: {} }, iavlSpec), undefined)
})

t.test('compressed batches: the lookup table checked once, each path\'s length and indexes', async (t) => {
  const compressed = (entries: ics23.ICompressedBatchEntry[], lookupInners = [inner(4)]): ics23.ICommitmentProof => ({ compressed: { entries, lookupInners } })
  t.equal(proofLimitProblem(compressed([{ exist: { path: [0, 0] } }, { nonexist: { left: { path: [0] }, right: { path: [0] } } }]), iavlSpec), undefined)
  t.equal(proofLimitProblem(compressed([{ exist: { path: [0] } }], [inner(4), inner(10240)]), iavlSpec), 'compressed.lookup_inners[1].prefix is 10240 bytes, the spec allows at most 45')
  t.equal(proofLimitProblem(compressed([{ exist: { path: Array.from({ length: 4500 }, () => 0) } }]), iavlSpec), 'compressed.entries[0].exist.path has 4500 steps, at most 256')
  t.equal(proofLimitProblem(compressed([{ exist: { path: [0, 1] } }]), iavlSpec), 'compressed.entries[0].exist.path[1] names no entry of lookup_inners')
  t.equal(proofLimitProblem(compressed([{ nonexist: { left: { path: [-1] } } }]), iavlSpec), 'compressed.entries[0].nonexist.left.path[0] names no entry of lookup_inners')
  t.equal(proofLimitProblem(compressed([{ nonexist: { right: { path: [3] } } }]), iavlSpec), 'compressed.entries[0].nonexist.right.path[0] names no entry of lookup_inners')
  t.equal(proofLimitProblem(compressed([{ nonexist: {} }, {}]), iavlSpec), undefined)
  t.equal(proofLimitProblem(compressed(Array.from({ length: 257 }, () => ({}))), iavlSpec), 'compressed has 257 entries, at most 256')
  t.equal(proofLimitProblem({ compressed: {} }, iavlSpec), undefined)
})

t.test('verifyValue checks every op against its limits before hashing any: the issue\'s 19 KB proof', async (t) => {
  const body = amplifiedProofBody(42) as { proof_ops: { ops: Array<{ key: string, data: string }> } }
  const op = body.proof_ops.ops[0] as { key: string, data: string }
  const key = storeKey(42n)
  const started = performance.now()
  t.throws(() => verifyValue([{ type: 'ics23:iavl', key, data: Buffer.from(op.data, 'base64') }], new Uint8Array(32), `/inference/${pathEscape(key)}`, Buffer.from('v')),
    new ProofError('proof of operation #0 exceeds the ics23:iavl spec\'s limits: compressed.lookup_inners[0].prefix is 10240 bytes, the spec allows at most 45'))
  t.ok(performance.now() - started < 1000, 'refused without the 45 MB of hashing')
})
