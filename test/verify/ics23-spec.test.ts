import { readFileSync } from 'node:fs'
import { iavlSpec, ics23, tendermintSpec, verifyNonMembership } from '@confio/ics23'
import { applyInner, applyLeaf } from '@confio/ics23/build/ops.js'
import t from 'tap'
import { commitmentSpecProblem, DEFAULT_MAX_DEPTH, existenceSpecProblem, innerSpecProblem, leafSpecProblem, specEquals } from '../../src/verify/ics23-spec.js'

// ics23 Go's CheckAgainstSpec, against upstream's own cases: the vendored
// TestCheckAgainstSpecData.json and TestCheckLeafData.json (test/fixtures/verify/ics23/README.md),
// and go/ops_test.go's TestInnerOpCheckAgainstSpec and
// TestForgeNonExistenceProofWithIncorrectMaxPrefixLength re-expressed (7f2c2d09).

/** Go's JSON of a protobuf struct (snake_case, bytes as base64) as the ics23 object it encodes. */
function fromGoJson (value: unknown, field = ''): unknown {
  if (typeof value === 'string' && ['key', 'value', 'prefix', 'suffix', 'emptyChild'].includes(field)) return Buffer.from(value, 'base64')
  if (Array.isArray(value)) return value.map((item) => fromGoJson(item))
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => {
    const camel = k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())
    return [camel, fromGoJson(v, camel)]
  }))
}
const fixture = (name: string): Record<string, Record<string, unknown>> =>
  JSON.parse(readFileSync(new URL(`../fixtures/verify/ics23/${name}`, import.meta.url), 'utf8')) as Record<string, Record<string, unknown>>

t.test('upstream TestCheckAgainstSpec (TestCheckAgainstSpecData.json): each case\'s exact error', async (t) => {
  const cases = Object.entries(fixture('TestCheckAgainstSpecData.json'))
  t.equal(cases.length, 11)
  for (const [name, c] of cases) {
    const problem = existenceSpecProblem(fromGoJson(c.Proof) as ics23.IExistenceProof, fromGoJson(c.Spec) as ics23.IProofSpec)
    t.equal(problem, c.Err === '' ? undefined : c.Err, name)
  }
})

t.test('upstream TestCheckLeaf (TestCheckLeafData.json): a spec with a leaf spec only', async (t) => {
  const cases = Object.entries(fixture('TestCheckLeafData.json'))
  t.equal(cases.length, 10)
  for (const [name, c] of cases) {
    const problem = leafSpecProblem(fromGoJson(c.Leaf) as ics23.ILeafOp, { leafSpec: fromGoJson(c.Spec) as ics23.ILeafOp })
    t.equal(problem !== undefined, c.IsErr, `${name}: ${problem ?? 'accepted'}`)
  }
  t.equal(leafSpecProblem({}, {}), 'spec.LeafSpec must be non-nil')
})

// go/ops_test.go generateInnerOpPrefix(): height 5, size 10, version 20 (zigzag), a length byte.
const innerPrefix = (): Buffer => Buffer.of(10, 20, 40, 0x20)
const iavlCopy = (): ics23.IProofSpec => ({ leafSpec: { ...iavlSpec.leafSpec }, innerSpec: { ...iavlSpec.innerSpec } })

t.test('upstream TestInnerOpCheckAgainstSpec (IavlSpec, layer 1)', async (t) => {
  const run = (change: (spec: ics23.IProofSpec, op: ics23.IInnerOp) => void): string | undefined => {
    const spec = iavlCopy()
    const op: ics23.IInnerOp = { hash: ics23.HashOp.SHA256, prefix: innerPrefix(), suffix: new Uint8Array() }
    change(spec, op)
    return innerSpecProblem(op, spec, 1)
  }
  // Changing the leaf spec's prehash key makes the spec no longer IavlSpec, so the IAVL rule is skipped.
  const notIavl = (spec: ics23.IProofSpec): void => { (spec.leafSpec as ics23.ILeafOp).prehashKey = ics23.HashOp.BITCOIN }
  t.equal(run(() => {}), undefined, 'success')
  t.equal(run((spec) => { spec.innerSpec = null }), 'spec.InnerSpec must be non-nil', 'failure: empty inner spec')
  t.equal(run((spec) => { spec.leafSpec = null }), 'spec.LeafSpec must be non-nil', 'failure: empty leaf spec')
  t.equal(run((_, op) => { op.hash = ics23.HashOp.BITCOIN }), 'unexpected HashOp: 5', 'failure: incorrect hash function inner op')
  t.equal(run((_, op) => { op.prefix = Uint8Array.of(1) }), 'IAVL height (-1) must be non-negative and greater than or equal to the layer number (1)', 'failure: spec fails validation')
  t.equal(run((spec, op) => { notIavl(spec); op.prefix = Buffer.concat([Buffer.of(0), innerPrefix()]) }), 'inner Prefix starts with 00', 'failure: inner prefix starts with leaf prefix')
  t.equal(run((spec, op) => { notIavl(spec); op.prefix = Uint8Array.of(1) }), 'innerOp prefix too short (1)', 'failure: inner prefix too short')
  t.equal(run((spec, op) => { notIavl(spec); op.prefix = Buffer.from('AgQIIGe3bHuC1g6+5/Qd0RoCU0waFu+nDCFzEDViMN/VrQwgIA==') }), 'innerOp prefix too long (52)', 'failure: inner prefix too long')
  t.equal(run((spec) => { (spec.innerSpec as ics23.IInnerSpec).childSize = 0 }), 'spec.InnerSpec.ChildSize must be >= 1', 'failure: child size must be greater than zero')
  t.equal(run((spec) => { const inner = spec.innerSpec as ics23.IInnerSpec; inner.maxPrefixLength = (inner.minPrefixLength as number) + (inner.childSize as number) }),
    'spec.InnerSpec.MaxPrefixLength must be < spec.InnerSpec.MinPrefixLength + spec.InnerSpec.ChildSize', 'failure: MaxPrefixLength >= MinPrefixLength + ChildSize')
  t.equal(run((_, op) => { op.suffix = Uint8Array.of(1) }), 'InnerOp suffix malformed', 'failure: inner op suffix malformed')
})

t.test('an inner spec without a child order: no children to the left, so the prefix is the spec\'s own bytes only', async (t) => {
  const spec: ics23.IProofSpec = { leafSpec: tendermintSpec.leafSpec, innerSpec: { hash: ics23.HashOp.SHA256, minPrefixLength: 1, maxPrefixLength: 1, childSize: 32 } }
  t.equal(innerSpecProblem({ hash: ics23.HashOp.SHA256, prefix: Uint8Array.of(1, ...new Uint8Array(32)) }, spec, 1), 'innerOp prefix too long (33)')
})

t.test('the leaf prefix itself as an inner prefix: refused (0.6.8 refuses only a longer one)', async (t) => {
  const spec: ics23.IProofSpec = { leafSpec: { ...tendermintSpec.leafSpec, prehashKey: ics23.HashOp.BITCOIN }, innerSpec: tendermintSpec.innerSpec }
  t.equal(innerSpecProblem({ hash: ics23.HashOp.SHA256, prefix: Uint8Array.of(0), suffix: new Uint8Array(32) }, spec, 1), 'inner Prefix starts with 00')
  t.equal(innerSpecProblem({ hash: ics23.HashOp.SHA256, prefix: Uint8Array.of(1), suffix: new Uint8Array(32) }, { ...spec, leafSpec: { ...spec.leafSpec, prefix: null } }, 1),
    'inner Prefix starts with ', 'as Go: a spec without a leaf prefix refuses every inner op')
})

t.test('upstream TestForgeNonExistenceProofWithIncorrectMaxPrefixLength: a spec that lets a left child pass for padding', async (t) => {
  // TendermintSpec with MaxPrefixLength 33: a node of three children (a, b, b2) then c. The
  // proof that "a" is absent puts a's hash in b's prefix, where it passes for padding.
  const spec: ics23.IProofSpec = { leafSpec: tendermintSpec.leafSpec, innerSpec: { ...tendermintSpec.innerSpec, maxPrefixLength: 33 } }
  const leaf = tendermintSpec.leafSpec as ics23.ILeafOp
  const hashOf = (k: string): Uint8Array => applyLeaf(leaf, Buffer.from(k), Buffer.from(k))
  const step = (prefix: Uint8Array[], suffix: Uint8Array[] = []): ics23.IInnerOp => ({ hash: ics23.HashOp.SHA256, prefix: Buffer.concat([Buffer.of(1), ...prefix]), suffix: Buffer.concat(suffix) })
  const exist = (k: string, path: ics23.IInnerOp[]): ics23.IExistenceProof => ({ key: Buffer.from(k), value: Buffer.from(k), leaf, path })
  const top = step([], [hashOf('c')])
  const aExist = exist('a', [step([], [hashOf('b'), hashOf('b2')]), top])
  const bExist = exist('b', [step([hashOf('a')], [hashOf('b2')]), top])
  const b2Exist = exist('b2', [step([hashOf('a'), hashOf('b')]), top])
  const y = applyInner(aExist.path?.[0] as ics23.IInnerOp, hashOf('a'))
  const cExist = exist('c', [step([y])])
  const aNotExist: ics23.INonExistenceProof = { key: Buffer.from('a'), right: bExist }
  let root = hashOf('a')
  for (const inner of aExist.path ?? []) root = applyInner(inner, root)

  t.ok(verifyNonMembership({ nonexist: aNotExist }, spec, root, Buffer.from('a')), '@confio/ics23 0.6.8 alone: "a" proven absent, though it exists')
  const expected = 'inner, spec.InnerSpec.MaxPrefixLength must be < spec.InnerSpec.MinPrefixLength + spec.InnerSpec.ChildSize'
  for (const [name, proof] of [['a', aExist], ['b', bExist], ['b2', b2Exist], ['c', cExist]] as const) t.equal(existenceSpecProblem(proof, spec), expected, `existence of ${name}`)
  t.equal(commitmentSpecProblem({ nonexist: aNotExist }, spec), `right proof, ${expected}`, 'non-existence of a')
})

t.test('depth: 128 inner ops unless the spec says otherwise (Go since v0.11.0, #352); 0.6.8 set none', async (t) => {
  t.equal(DEFAULT_MAX_DEPTH, 128)
  const proof = (depth: number): ics23.IExistenceProof => ({
    leaf: tendermintSpec.leafSpec,
    path: Array.from({ length: depth }, () => ({ hash: ics23.HashOp.SHA256, prefix: Uint8Array.of(1), suffix: new Uint8Array(32) }))
  })
  t.equal(existenceSpecProblem(proof(128), tendermintSpec), undefined)
  t.equal(existenceSpecProblem(proof(129), tendermintSpec), 'innerOps depth too long: 129')
  t.equal(existenceSpecProblem(proof(129), { ...tendermintSpec, maxDepth: 200 }), undefined, 'a spec\'s own maxDepth')
  t.equal(existenceSpecProblem(proof(2), { ...tendermintSpec, minDepth: 3 }), 'innerOps depth too short: 2')
})

t.test('commitmentSpecProblem: every existence proof a proof holds', async (t) => {
  const good: ics23.IExistenceProof = { leaf: tendermintSpec.leafSpec, path: [{ hash: ics23.HashOp.SHA256, prefix: Uint8Array.of(1), suffix: new Uint8Array(32) }] }
  const bad: ics23.IExistenceProof = { ...good, path: [{ hash: ics23.HashOp.SHA256, prefix: Uint8Array.of(2, ...new Uint8Array(32)) }] }
  const badMessage = 'inner, expected inner op prefix to begin with: [1], got: [2]'
  t.equal(commitmentSpecProblem({ exist: good }, tendermintSpec), undefined)
  t.equal(commitmentSpecProblem({ exist: bad }, tendermintSpec), badMessage)
  t.equal(commitmentSpecProblem({ nonexist: { left: good, right: good } }, tendermintSpec), undefined)
  t.equal(commitmentSpecProblem({ nonexist: { left: bad, right: good } }, tendermintSpec), `left proof, ${badMessage}`)
  t.equal(commitmentSpecProblem({ nonexist: {} }, tendermintSpec), undefined, 'no sides: refused when its root is calculated')
  t.equal(commitmentSpecProblem({ batch: { entries: [{ exist: good }, { nonexist: { right: good } }, {}] } }, tendermintSpec), undefined)
  t.equal(commitmentSpecProblem({ batch: { entries: [{ exist: good }, { nonexist: { right: bad } }] } }, tendermintSpec), `batch entry #1: right proof, ${badMessage}`)
  t.equal(commitmentSpecProblem({ batch: { entries: [{ exist: bad }] } }, tendermintSpec), `batch entry #0: ${badMessage}`)
  t.equal(commitmentSpecProblem({ batch: {} }, tendermintSpec), undefined)
  t.equal(commitmentSpecProblem({}, tendermintSpec), undefined, 'no proof at all: refused when its root is calculated')
})

t.test('specEquals is Go\'s SpecEquals: the numbers, not the leaf prefix or the child order\'s values', async (t) => {
  t.ok(specEquals(iavlSpec, iavlCopy()))
  t.notOk(specEquals(iavlSpec, tendermintSpec))
  t.ok(specEquals(iavlSpec, { ...iavlCopy(), leafSpec: { ...iavlSpec.leafSpec, prefix: Uint8Array.of(9) } }), 'another leaf prefix')
  t.ok(specEquals(iavlSpec, { ...iavlCopy(), innerSpec: { ...iavlSpec.innerSpec, childOrder: [1, 0] } }), 'another order of two children')
  t.notOk(specEquals(iavlSpec, { ...iavlCopy(), innerSpec: { ...iavlSpec.innerSpec, childOrder: [0, 1, 2] } }), 'three children')
  t.notOk(specEquals(iavlSpec, { ...iavlCopy(), innerSpec: { ...iavlSpec.innerSpec, childOrder: null } }), 'no child order')
  t.notOk(specEquals(iavlSpec, { leafSpec: iavlSpec.leafSpec }), 'no inner spec')
  t.notOk(specEquals({ innerSpec: iavlSpec.innerSpec }, iavlSpec), 'no leaf spec')
  t.ok(specEquals({}, {}), 'both empty')
})
