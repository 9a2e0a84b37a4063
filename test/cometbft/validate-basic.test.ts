import t from 'tap'
import { BlockIdFlag, type Commit, type CommitSig } from '../../src/cometbft/types.js'
import { blockIdProblem, commitProblem, hashProblem, headerProblem } from '../../src/cometbft/validate-basic.js'
import { ZERO_TIME } from '../../src/cometbft/timestamp.js'

const hash = new Uint8Array(32).fill(1)
const sig: CommitSig = { blockIdFlag: BlockIdFlag.Commit, validatorAddress: new Uint8Array(20), timestamp: { seconds: 1, nanos: 0 }, signature: new Uint8Array(64) }
const absent: CommitSig = { blockIdFlag: BlockIdFlag.Absent, validatorAddress: new Uint8Array(), timestamp: ZERO_TIME, signature: new Uint8Array() }
const commit: Commit = { height: 9n, round: 0, blockId: { hash, partSetHeader: { total: 1, hash } }, signatures: [sig, absent, { ...sig, blockIdFlag: BlockIdFlag.Nil }] }

t.test('a well-formed commit has no problem', async (t) => {
  t.equal(commitProblem(commit), undefined)
  t.equal(commitProblem({ ...commit, height: 0n, blockId: { hash: new Uint8Array(), partSetHeader: { total: 0, hash: new Uint8Array() } }, signatures: [] }), undefined,
    'height 0 (the first block\'s last commit) is empty')
})

t.test('CometBFT\'s CommitFromProto checks, in its order and words', async (t) => {
  const cases: Array<[string, Commit | undefined, string]> = [
    ['no commit', undefined, 'nil Commit'],
    ['a short part set hash', { ...commit, blockId: { hash, partSetHeader: { total: 1, hash: hash.subarray(1) } } }, 'wrong Hash: expected size to be 32 bytes, got 31 bytes'],
    ['a short block hash', { ...commit, blockId: { hash: hash.subarray(2), partSetHeader: { total: 1, hash } } }, 'wrong Hash'],
    ['an unknown flag', { ...commit, signatures: [{ ...sig, blockIdFlag: 0 }] }, 'unknown BlockIDFlag: 0'],
    ['an absent vote with an address', { ...commit, signatures: [{ ...absent, validatorAddress: new Uint8Array(20) }] }, 'validator address is present'],
    ['an absent vote with a time', { ...commit, signatures: [{ ...absent, timestamp: { seconds: ZERO_TIME.seconds, nanos: 1 } }] }, 'time is present'],
    ['an absent vote with a time (seconds)', { ...commit, signatures: [{ ...absent, timestamp: { seconds: 0, nanos: 0 } }] }, 'time is present'],
    ['an absent vote with a signature', { ...commit, signatures: [{ ...absent, signature: new Uint8Array(64) }] }, 'signature is present'],
    ['a short address', { ...commit, signatures: [{ ...sig, validatorAddress: new Uint8Array(19) }] }, 'expected ValidatorAddress size to be 20 bytes, got 19 bytes'],
    ['no signature', { ...commit, signatures: [{ ...sig, blockIdFlag: BlockIdFlag.Nil, signature: new Uint8Array() }] }, 'signature is missing'],
    ['a long signature', { ...commit, signatures: [{ ...sig, signature: new Uint8Array(65) }] }, 'signature is too big (max: 64)'],
    ['a negative height', { ...commit, height: -1n }, 'negative Height'],
    ['a negative round', { ...commit, round: -1 }, 'negative Round'],
    ['a nil block', { ...commit, blockId: { hash: new Uint8Array(), partSetHeader: { total: 0, hash: new Uint8Array() } } }, 'commit cannot be for nil block'],
    ['no signatures', { ...commit, signatures: [] }, 'no signatures in commit']
  ]
  for (const [name, c, message] of cases) t.equal(commitProblem(c), message, name)
})

t.test('Header.ValidateBasic\'s own checks, in its order and words', async (t) => {
  const header = { blockProtocol: 11n, chainId: 'c'.repeat(50), height: 1n, proposerAddress: new Uint8Array(20) }
  t.equal(headerProblem(header), undefined, 'a 50-character chain id and height 1 pass')
  const cases: Array<[string, Partial<typeof header>, string]> = [
    ['another block protocol', { blockProtocol: 10n, chainId: 'c'.repeat(51) }, 'block protocol is incorrect: got: 10, want: 11'],
    ['a chain id over 50 characters', { chainId: 'c'.repeat(51), height: 0n }, 'chainID is too long; got: 51, max: 50'],
    ['height 0', { height: 0n, proposerAddress: new Uint8Array() }, 'zero or negative Height'],
    ['a negative height', { height: -1n }, 'zero or negative Height'],
    ['a short proposer address', { proposerAddress: new Uint8Array(19) }, 'invalid ProposerAddress length; got: 19, expected: 20']
  ]
  for (const [name, fields, message] of cases) t.equal(headerProblem({ ...header, ...fields }), message, name)
})

t.test('hashes are empty or 32 bytes (types.ValidateHash), in a block id too', async (t) => {
  t.equal(hashProblem(new Uint8Array()), undefined)
  t.equal(hashProblem(hash), undefined)
  t.equal(hashProblem(new Uint8Array(33)), 'expected size to be 32 bytes, got 33 bytes')
  t.equal(blockIdProblem({ hash, partSetHeader: { total: 1, hash } }), undefined)
  t.equal(blockIdProblem({ hash: new Uint8Array(1), partSetHeader: { total: 1, hash: new Uint8Array(1) } }), 'wrong Hash: expected size to be 32 bytes, got 1 bytes', 'the part set hash is checked first')
})
