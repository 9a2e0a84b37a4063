import t from 'tap'
import type { Header, SignedHeader } from '../../src/cometbft/types.js'
import { signedHeaderProblem } from '../../src/light/signed-header.js'
import { CHAIN, commitFor, honestChain } from '../fixtures/light/test-chain.js'
import { testSigners } from '../fixtures/verify/signed-commit.js'

// SignedHeader.ValidateBasic: each problem named as CometBFT names it.

const signers = testSigners('sh', [3n, 2n])
const [, good] = honestChain([signers, signers]) as [unknown, { signedHeader: SignedHeader }]
const { header, commit } = good.signedHeader
/** The header changed and signed again, so only the change is wrong. */
const resigned = (change: Partial<Header>): SignedHeader => {
  const changed = { ...header, ...change }
  return { header: changed, commit: commitFor(changed, signers) }
}

t.test('a well-formed signed header of the chain has no problem', async (t) => {
  t.equal(signedHeaderProblem(good.signedHeader, CHAIN), undefined)
})

t.test('the header\'s own checks (Header.ValidateBasic)', async (t) => {
  t.equal(signedHeaderProblem(resigned({ version: { block: 10n, app: 0n } }), CHAIN), 'invalid header: block protocol is incorrect: got: 10, want: 11')
  t.equal(signedHeaderProblem(resigned({ proposerAddress: new Uint8Array(19) }), CHAIN), 'invalid header: invalid ProposerAddress length; got: 19, expected: 20')
  t.equal(signedHeaderProblem(resigned({ lastBlockId: { ...header.lastBlockId, hash: new Uint8Array(31) } }), CHAIN), 'invalid header: wrong LastBlockID: wrong Hash')
  t.equal(signedHeaderProblem(resigned({ dataHash: new Uint8Array(33) }), CHAIN), 'invalid header: wrong DataHash: expected size to be 32 bytes, got 33 bytes')
  t.equal(signedHeaderProblem(resigned({ lastResultsHash: new Uint8Array(1) }), CHAIN), 'invalid header: wrong LastResultsHash: expected size to be 32 bytes, got 1 bytes')
  t.equal(signedHeaderProblem(resigned({ appHash: new Uint8Array(5) }), CHAIN), undefined, 'the app hash may be any length')
})

t.test('the commit\'s, the chain\'s, the height\'s, and the hash the commit signs', async (t) => {
  t.equal(signedHeaderProblem({ header, commit: { ...commit, signatures: [] } }, CHAIN), 'invalid commit: no signatures in commit')
  t.equal(signedHeaderProblem(good.signedHeader, 'gonka-other'), `header belongs to another chain "${CHAIN}", not "gonka-other"`)
  t.equal(signedHeaderProblem({ header, commit: { ...commit, height: 3n } }, CHAIN), 'header and commit height mismatch: 2 vs 3')
  t.match(signedHeaderProblem({ header: { ...header, appHash: new Uint8Array(32) }, commit }, CHAIN), /^commit signs block [0-9A-F]{64}, header is block [0-9A-F]{64}$/)
  t.match(signedHeaderProblem({ header: { ...header, validatorsHash: new Uint8Array() }, commit }, CHAIN), /^commit signs block [0-9A-F]{64}, header is block $/, 'a header with no validators hash has no hash')
})
