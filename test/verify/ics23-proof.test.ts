import { ics23 } from '@confio/ics23'
import { compress } from '@confio/ics23/build/compress.js'
import t, { type Test } from 'tap'
import { ProofError, verifyAbsence, verifyValue, type ProofOp } from '../../src/verify/ics23-proof.js'
import { pathEscape } from '../../src/verify/key-path.js'
import { storeProof, type GatewayProofOps } from '../../harness/chain-simulator/store-proof.js'
import { ics23Vector, type Ics23Vector } from '../fixtures/verify/ics23-vectors.js'

// Public vectors (cosmos/ics23 testdata, all of them in ics23-vectors.test.ts) for each spec
// alone, and two-layer proofs built from the specifications (harness/chain-simulator/store-proof.ts)
// for the chain.

const hex = (text: string): Buffer => Buffer.from(text, 'hex')

function single (type: string, v: Ics23Vector): { ops: ProofOp[], root: Buffer, path: string, value: Buffer } {
  return { ops: [{ type, key: v.key, data: v.proof }], root: v.root, path: `/${pathEscape(v.key)}`, value: v.value ?? Buffer.alloc(0) }
}
const fails = (t: Test, run: () => void, message: string, name = message): void => { t.throws(run, new ProofError(message), name) }

t.test('cosmos/ics23 vectors: IavlSpec for ics23:iavl, TendermintSpec for ics23:simple', async (t) => {
  for (const [type, store, name] of [['ics23:iavl', 'iavl', 'exist_left'], ['ics23:simple', 'tendermint', 'exist_middle']] as const) {
    const v = single(type, ics23Vector(store, name))
    verifyValue(v.ops, v.root, v.path, v.value)
    t.pass(`${store}/${name}`)
  }
  // IavlSpec refuses a simple merkle proof: its leaf prefix (0x00) holds no IAVL size or version.
  const simple = single('ics23:iavl', ics23Vector('tendermint', 'exist_middle'))
  fails(t, () => verifyValue(simple.ops, simple.root, simple.path, simple.value),
    'proof of operation #0 does not meet the ics23:iavl spec: leaf, failed to read IAVL size varint: EOF')
})

t.test('a non-existence proof proves nothing exists: membership fails', async (t) => {
  const v = single('ics23:iavl', ics23Vector('iavl', 'nonexist_middle'))
  fails(t, () => verifyValue(v.ops, v.root, v.path, Buffer.from('x')), `proof did not verify existence of key ${(v.ops[0] as ProofOp).key.toString()} with given value 78: invalid proof`)
})

// The ActiveParticipants entry of epoch 42 in a store of five entries, under a multistore of eight modules.
const KEY = Buffer.concat([Buffer.from('ActiveParticipants/value/'), hex('000000000000002a'), Buffer.from('/')])
const VALUE = Buffer.from('0a2a0a05616c696365', 'hex')
const entries = [
  { key: KEY, value: VALUE, version: 90n },
  ...['a', 'Model/x', 'Zeta', 'ActiveParticipants/value/\u0000'].map((k, i) => ({ key: Buffer.from(k), value: Buffer.from(`v${i}`), version: BigInt(10 + i) }))
]
const store = storeProof(entries, 100n)
const proof = store.prove(KEY) as GatewayProofOps
const ops = (p: GatewayProofOps = proof): ProofOp[] => p.ops.map((op) => ({ type: op.type, key: Buffer.from(op.key, 'base64'), data: Buffer.from(op.data, 'base64') }))
const PATH = `/inference/${pathEscape(KEY)}`

t.test('the chain\'s two-layer proof: the value in the module\'s IAVL tree, that tree\'s root in the multistore', async (t) => {
  verifyValue(ops(), store.appHash, PATH, VALUE)
  t.pass('verifies against the app hash')
  for (const other of entries.slice(1)) {
    verifyValue(ops(store.prove(other.key)), store.appHash, `/inference/${pathEscape(other.key)}`, other.value)
  }
  t.pass('so does every other entry of the store')
})

t.test('absence: a non-existence proof of the IAVL store (adjacent neighbours), then the multistore op', async (t) => {
  // The store's keys in order: "ActiveParticipants/value/\0", KEY, "Model/x", "Zeta", "a".
  const existOf = (key: string | Buffer): ics23.IExistenceProof =>
    ics23.CommitmentProof.decode(Buffer.from((store.prove(Buffer.from(key)) as GatewayProofOps).ops[0]?.data as string, 'base64')).exist as ics23.IExistenceProof
  const simpleOp = ops()[1] as ProofOp
  const absent = (key: string, left?: string | Buffer, right?: string | Buffer): ProofOp[] => [{
    type: 'ics23:iavl',
    key: Buffer.from(key),
    data: ics23.CommitmentProof.encode({ nonexist: { key: Buffer.from(key), left: left === undefined ? null : existOf(left), right: right === undefined ? null : existOf(right) } }).finish()
  }, simpleOp]
  const verify = (proof: ProofOp[], key: string, root: Uint8Array = store.appHash): void => { verifyAbsence(proof, root, `/inference/${pathEscape(Buffer.from(key))}`) }
  verify(absent('N', 'Model/x', 'Zeta'), 'N')
  verify(absent('0', undefined, 'ActiveParticipants/value/\u0000'), '0')
  verify(absent('b', 'a'), 'b')
  t.pass('between two neighbours, left of the leftmost, right of the rightmost')

  const refused = (message: string): ProofError => new ProofError(`proof did not verify absence of key: ${message}: invalid proof`)
  t.throws(() => { verify(absent('N', KEY, 'Zeta'), 'N') }, refused('N'), 'neighbours that are not adjacent ("Model/x" lies between)')
  t.throws(() => { verify(absent('Model/x', KEY, 'Zeta'), 'Model/x') }, refused('Model/x'), 'a key that is present, between non-adjacent neighbours')
  t.throws(() => { verify(absent('N', undefined, 'Zeta'), 'N') }, refused('N'), 'no left neighbour, and the right one is not the leftmost')
  t.throws(() => { verify(absent('N', 'Model/x'), 'N') }, refused('N'), 'no right neighbour, and the left one is not the rightmost')
  t.throws(() => { verify(absent('Zeta', 'Model/x', 'Zeta'), 'Zeta') }, refused('Zeta'), 'the key is its right neighbour')
  const appHash = Buffer.from(store.appHash)
  appHash[0] = (appHash[0] as number) ^ 1
  t.throws(() => { verify(absent('N', 'Model/x', 'Zeta'), 'N', appHash) }, /^calculated root hash is invalid/, 'another app hash')
  t.throws(() => { verifyAbsence([], store.appHash, '/x') }, new ProofError('no proof operators: nothing proves the key absent'), 'no ops at all')
})

t.test('tampering with one byte fails with the Go message', async (t) => {
  const value = Buffer.from(VALUE)
  value[3] = (value[3] as number) ^ 1
  fails(t, () => verifyValue(ops(), store.appHash, PATH, value),
    `proof did not verify existence of key ${KEY.toString('utf8')} with given value ${value.toString('hex')}: invalid proof`, 'one byte of the value')
  const appHash = Buffer.from(store.appHash)
  appHash[0] = (appHash[0] as number) ^ 1
  fails(t, () => verifyValue(ops(), appHash, PATH, VALUE),
    `calculated root hash is invalid: expected ${appHash.toString('hex').toUpperCase()} but got ${store.appHash.toString('hex').toUpperCase()}`, 'one byte of the app hash')
  const data = Buffer.from(ops()[1]?.data as Uint8Array)
  data[data.length - 1] = (data[data.length - 1] as number) ^ 1
  t.throws(() => verifyValue([ops()[0] as ProofOp, { ...(ops()[1] as ProofOp), data }], store.appHash, PATH, VALUE), ProofError, 'one byte of the multistore proof')
})

t.test('key path and op keys: consumed from the last part, in CometBFT\'s words', async (t) => {
  const [iavlOp, simpleOp] = ops() as [ProofOp, ProofOp]
  const other = Buffer.concat([Buffer.from('ActiveParticipants/value/'), hex('000000000000002b'), Buffer.from('/')])
  fails(t, () => verifyValue(ops(), store.appHash, `/inference/${pathEscape(other)}`, VALUE),
    `key mismatch on operation #0: expected ${other.toString('utf8')} but got ${KEY.toString('utf8')}`, 'another epoch\'s key')
  fails(t, () => verifyValue([simpleOp, iavlOp], store.appHash, PATH, VALUE),
    `key mismatch on operation #0: expected ${KEY.toString('utf8')} but got inference`, 'ops in the wrong order')
  fails(t, () => verifyValue(ops(), store.appHash, `/${pathEscape(KEY)}`, VALUE),
    'key path has insufficient # of parts: expected no more keys but got inference', 'a path one part short')
  fails(t, () => verifyValue(ops(), store.appHash, `/extra${PATH}`, VALUE), 'keypath not consumed all', 'a path one part long')
  fails(t, () => verifyValue(ops(), store.appHash, 'inference', VALUE), "key path string must start with a forward slash '/'", 'a path without its slash')
  // An op without a key consumes no part of the path, and proves its value under no key.
  fails(t, () => verifyValue([{ ...iavlOp, key: new Uint8Array() }, simpleOp], store.appHash, PATH, VALUE),
    `proof did not verify existence of key  with given value ${VALUE.toString('hex')}: invalid proof`, 'a keyless op')
  fails(t, () => verifyValue([], Buffer.from('ab'), '/x', Buffer.from('cd')), 'calculated root hash is invalid: expected 6162 but got 6364', 'no ops: the value is the root')
})

t.test('decoding: only the runtime\'s two op types, and a protobuf CommitmentProof', async (t) => {
  const [iavlOp] = ops() as [ProofOp]
  fails(t, () => verifyValue([{ ...iavlOp, type: 'ics23:smt' }], store.appHash, PATH, VALUE), 'decoding proof: decoding a proof operator: unrecognized proof type ics23:smt')
  fails(t, () => verifyValue([{ ...iavlOp, type: 'iavl:v' }], store.appHash, PATH, VALUE), 'decoding proof: decoding a proof operator: unrecognized proof type iavl:v')
  t.throws(() => verifyValue([{ ...iavlOp, data: Buffer.from([0x0a, 0x10, 0x01]) }], store.appHash, PATH, VALUE),
    { name: 'ProofError', message: /^decoding proof: decoding a proof operator: index out of range/ }, 'truncated protobuf')
})

t.test('the root a proof implies (Go\'s CommitmentProof.Calculate), and its errors', async (t) => {
  const exist = ics23.CommitmentProof.decode(ops()[0]?.data as Uint8Array).exist as ics23.IExistenceProof
  const run = (p: ics23.ICommitmentProof, value: Uint8Array = VALUE): void =>
    verifyValue([{ type: 'ics23:iavl', key: KEY, data: ics23.CommitmentProof.encode(p).finish() }], store.appHash, `/inference/${pathEscape(KEY)}`, value)
  const calculation = (message: string): string => `could not calculate root for proof: ${message}: invalid proof`
  fails(t, () => run({}), calculation('unrecognized proof type'), 'an empty proof')
  const spec = (message: string): string => `proof of operation #0 does not meet the ics23:iavl spec: ${message}`
  fails(t, () => run({ exist: { ...exist, leaf: null } }), spec('existence Proof needs defined LeafOp'), 'no leaf: refused by the spec check, before any hashing')
  fails(t, () => run({ exist: { ...exist, key: new Uint8Array() } }), calculation('leaf, leaf op needs key'))
  fails(t, () => run({ exist: { ...exist, value: new Uint8Array() } }), calculation('leaf, leaf op needs value'))
  fails(t, () => run({ exist: { ...exist, leaf: { ...exist.leaf, hash: 7 as ics23.HashOp } } }), spec('leaf, unexpected HashOp: 7'), 'a hash op ics23 does not know: refused by the spec check')
  fails(t, () => run({ exist: { ...exist, path: [{ ...exist.path?.[0], hash: 9 as ics23.HashOp }] } }), spec('inner, unexpected HashOp: 9'))
  fails(t, () => run({ nonexist: { key: KEY } }), calculation('nonexistence proof has empty Left and Right proof'))
  fails(t, () => run({ batch: { entries: [] } }), calculation('batch proof has empty entry'))
  fails(t, () => run({ batch: { entries: [{}] } }), calculation('unrecognized proof type'), 'a batch entry with neither proof')

  // Each shape implies the IAVL root; only a proof that contains the key and value proves them.
  const toTheRoot = (p: ics23.ICommitmentProof): void => { t.throws(() => run(p), /^key path has insufficient|^calculated root hash is invalid|^keypath not consumed/) }
  toTheRoot({ exist }) // one op only: the IAVL root is compared with the app hash
  toTheRoot({ batch: { entries: [{ exist }] } })
  toTheRoot(compress({ batch: { entries: [{ exist }] } }))
  fails(t, () => run({ nonexist: { key: KEY, right: exist } }), `proof did not verify existence of key ${KEY.toString('utf8')} with given value ${VALUE.toString('hex')}: invalid proof`)
  fails(t, () => run({ batch: { entries: [{ nonexist: { key: KEY, left: exist } }] } }), `proof did not verify existence of key ${KEY.toString('utf8')} with given value ${VALUE.toString('hex')}: invalid proof`)
})
