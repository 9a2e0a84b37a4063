import t from 'tap'
import { DEFAULT_TRUST_LEVEL } from '../../../src/light/commit-light.js'
import type { LightBlock, LightOptions, TrustedState } from '../../../src/light/light-block.js'
import { verifyAdjacent, verifyLightBlock, verifyNonAdjacent } from '../../../src/light/verifier.js'
import { ProofError, verifyValue, type ProofOp } from '../../../src/verify/ics23-proof.js'
import { pathEscape } from '../../../src/verify/key-path.js'
import { BlockClock } from '../../../harness/chain-simulator/block-clock.js'
import { CURRENT_EPOCH, storeKey } from '../../../harness/chain-simulator/data/epochs.js'
import { SignedChain } from '../../../harness/chain-simulator/signed-chain.js'
import { startChainSimulator, type ChainSimulator } from '../../../harness/chain-simulator/simulator.js'
import { getJson, headerOf, lightBlockAt } from '../../fixtures/light/gateway-blocks.js'

// Each lie a node of the simulated chain can tell (harness/chain-simulator/lies.ts), switched
// on a running node, is caught by src/light's verifier or src/verify's proof check with the
// verdict a light client gives it; a node that is merely behind verifies, only lower.

const OPTIONS: LightOptions = { trustingPeriodMs: 14 * 24 * 3600 * 1000, maxClockDriftMs: 10_000, trustLevel: DEFAULT_TRUST_LEVEL, linkLastBlockId: true }
const nowTime = (): { seconds: number, nanos: number } => ({ seconds: Math.floor(Date.now() / 1000), nanos: 0 })

const clock = new BlockClock()
const chain = new SignedChain()
let honest: ChainSimulator
let liar: ChainSimulator
t.before(async () => {
  honest = await startChainSimulator(0, { clock, chain })
  liar = await startChainSimulator(0, { clock, chain })
})
t.teardown(async () => { await Promise.all([honest.close(), liar.close()]) })
t.afterEach(() => { liar.clearFaults() })

const H = BigInt(clock.height - 10)
/** The honest block below `height`, as a light client that verified it keeps it. */
async function trustedBelow (height: bigint): Promise<TrustedState> {
  const block = await lightBlockAt(honest.url, height - 1n)
  return { header: block.signedHeader.header, nextValidators: block.nextValidators }
}
const kindOf = (verdict: ReturnType<typeof verifyAdjacent>): string => verdict.ok ? 'verified' : verdict.kind

t.test('a header with a changed app hash, not re-signed: the commit names another header (invalid)', async (t) => {
  const trusted = await trustedBelow(H)
  liar.lies.forgedAppHashFrom = Number(H)
  const forged: LightBlock = await lightBlockAt(liar.url, H)
  const verdict = verifyAdjacent(trusted, forged, nowTime(), OPTIONS)
  t.equal(kindOf(verdict), 'invalid', 'refused')
  t.match(verdict, { reason: /commit signs block [0-9A-F]{64}, header is block [0-9A-F]{64}/ }, 'because the signed block ID is not the header\'s hash')
  t.not(Buffer.compare(forged.signedHeader.header.appHash, (await lightBlockAt(honest.url, H)).signedHeader.header.appHash), 0, 'the lie is in the app hash')
  liar.clearFaults()
  t.equal(kindOf(verifyAdjacent(trusted, await lightBlockAt(liar.url, H), nowTime(), OPTIONS)), 'verified', 'switched off at run time: the same node verifies')
})

t.test('a fork signed by less than a third: adjacent is invalid (under 2/3), skipping is not-enough-trust (under 1/3)', async (t) => {
  const trusted = await trustedBelow(H)
  liar.lies.forkFrom = Number(H)
  const fork = await lightBlockAt(liar.url, H)
  const honestBlock = await lightBlockAt(honest.url, H)
  t.not(Buffer.compare(fork.signedHeader.commit.blockId.hash, honestBlock.signedHeader.commit.blockId.hash), 0, 'the fork is another block at H')
  t.same(fork.signedHeader.header.validatorsHash, honestBlock.signedHeader.header.validatorsHash, 'named by the same validator set')
  const signed = fork.signedHeader.commit.signatures.filter((s) => s.signature.length > 0).length
  t.ok(signed >= 1 && signed < fork.validators.validators.length, `${signed} of ${fork.validators.validators.length} validators signed it`)
  const adjacent = verifyAdjacent(trusted, fork, nowTime(), OPTIONS)
  t.equal(kindOf(adjacent), 'invalid', 'adjacent: refused')
  t.match(adjacent, { reason: /insufficient voting power/ }, 'for too little power')
  const skipping = verifyNonAdjacent(await trustedBelow(H - 4n), await lightBlockAt(liar.url, H + 2n), nowTime(), OPTIONS)
  t.equal(kindOf(skipping), 'not-enough-trust', 'skipping onto the fork: not enough of the trusted set signed')
  t.equal(kindOf(verifyAdjacent(trusted, honestBlock, nowTime(), OPTIONS)), 'verified', 'the honest node\'s block at H verifies')
})

t.test('a node that is merely behind serves an older head, which verifies', async (t) => {
  liar.lag = 5
  const latest = headerOf(await getJson(`${liar.url}/cosmos/base/tendermint/v1beta1/blocks/latest`))
  t.equal(latest.height, BigInt(honest.head - 5), 'its head is 5 blocks lower')
  const trusted = await trustedBelow(latest.height - 20n)
  const behind = await lightBlockAt(liar.url, latest.height - 1n)
  t.equal(kindOf(verifyLightBlock(trusted, behind, nowTime(), OPTIONS)), 'verified', 'its blocks verify: behind is not lying')
  liar.lag = 0
})

t.test('a changed value with the true value\'s proof: the proof does not verify under the signed app hash', async (t) => {
  const key = storeKey(BigInt(CURRENT_EPOCH))
  const query = `/cosmos/base/tendermint/v1beta1/abci_query?path=store/inference/key&data=${encodeURIComponent(key.toString('base64'))}&height=${H}&prove=true`
  // The state after H is what block H + 1's app hash commits to: verify that header first.
  const above = await lightBlockAt(honest.url, H + 1n)
  t.equal(kindOf(verifyAdjacent(await trustedBelow(H + 1n), above, nowTime(), OPTIONS)), 'verified', 'the app hash is a signed one')
  const appHash = above.signedHeader.header.appHash
  const check = async (node: ChainSimulator): Promise<{ value: Buffer, verify: () => void }> => {
    const answer = await getJson(node.url + query)
    const ops: ProofOp[] = answer.proof_ops.ops.map((op: { type: string, key: string, data: string }) => ({ type: op.type, key: Buffer.from(op.key, 'base64'), data: Buffer.from(op.data, 'base64') }))
    const value = Buffer.from(answer.value, 'base64')
    return { value, verify: () => { verifyValue(ops, appHash, `/inference/${pathEscape(key)}`, value) } }
  }
  const truth = await check(honest)
  t.doesNotThrow(truth.verify, 'the honest node\'s value verifies: the header\'s app hash is the store\'s root')
  liar.lies.forgedValue = true
  const lie = await check(liar)
  t.not(Buffer.compare(lie.value, truth.value), 0, 'the liar serves another value')
  t.throws(lie.verify, ProofError, 'whose proof does not verify')
  liar.clearFaults()
  t.doesNotThrow((await check(liar)).verify, 'switched off: the node answers the truth again')
})
