import t from 'tap'
import { decodeBlockJson } from '../../../src/cometbft/block-json.js'
import type { Commit } from '../../../src/cometbft/types.js'
import { DEFAULT_TRUST_LEVEL } from '../../../src/light/commit-light.js'
import type { LightBlock, LightOptions, TrustedState } from '../../../src/light/light-block.js'
import { rpcSignedHeader, rpcValidatorPage } from '../../../src/light/rpc-light-json.js'
import { trustFromRoot } from '../../../src/light/trust-root.js'
import { validatorSetHash } from '../../../src/light/validator-set-hash.js'
import { newValidatorSet } from '../../../src/cometbft/validator-set.js'
import { verifyAdjacent, verifyNonAdjacent } from '../../../src/light/verifier.js'
import { BlockClock } from '../../../harness/chain-simulator/block-clock.js'
import { LATEST_HEIGHT } from '../../../harness/chain-simulator/data/epochs.js'
import { SignedChain } from '../../../harness/chain-simulator/signed-chain.js'
import { startChainSimulator, type ChainSimulator } from '../../../harness/chain-simulator/simulator.js'
import { getJson, headerOf, lightBlockAt } from '../../fixtures/light/gateway-blocks.js'

// The simulated chain is a real CometBFT chain: src/light's verifier, fed over a real socket
// from the simulator's REST answers, follows it from an operator's trust root.

const OPTIONS: LightOptions = { trustingPeriodMs: 14 * 24 * 3600 * 1000, maxClockDriftMs: 10_000, trustLevel: DEFAULT_TRUST_LEVEL, linkLastBlockId: true }
const nowTime = (): { seconds: number, nanos: number } => ({ seconds: Math.floor(Date.now() / 1000), nanos: 0 })
// Epochs start at POC_START + 20k: the trust root is 5 blocks past one, so 60 heights cross
// three set changes (LATEST_HEIGHT - 50, - 30, - 10).
const ROOT_HEIGHT = BigInt(LATEST_HEIGHT - 65)

const clock = new BlockClock()
const chain = new SignedChain()
const nodes: ChainSimulator[] = []
t.before(async () => {
  for (let i = 0; i < 3; i++) nodes.push(await startChainSimulator(0, { clock, chain }))
})
t.teardown(async () => { await Promise.all(nodes.map(async (n) => await n.close())) })
t.afterEach(() => { for (const node of nodes) node.clearFaults() })

/** The trusted state at the root, from the operator's hash (the chain's own, not a node's word). */
async function trustedRoot (): Promise<TrustedState> {
  const root = { height: ROOT_HEIGHT, hash: chain.block(Number(ROOT_HEIGHT)).blockId.hash }
  const outcome = trustFromRoot(root, await lightBlockAt((nodes[0] as ChainSimulator).url, ROOT_HEIGHT), nowTime(), OPTIONS.trustingPeriodMs)
  if (!outcome.ok) throw new Error(outcome.reason)
  return outcome.state
}

const stateOf = (block: LightBlock): TrustedState => ({ header: block.signedHeader.header, nextValidators: block.nextValidators })
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')

t.test('three nodes of one signed chain: 60 adjacent steps from a trust root verify, across three validator-set changes', async (t) => {
  let trusted = await trustedRoot()
  const sets = new Set([hex(trusted.header.validatorsHash)])
  for (let step = 1n; step <= 60n; step++) {
    const node = nodes[Number(step) % 3] as ChainSimulator
    const block = await lightBlockAt(node.url, ROOT_HEIGHT + step)
    const verdict = verifyAdjacent(trusted, block, nowTime(), OPTIONS)
    if (!verdict.ok) t.fail(`height ${ROOT_HEIGHT + step}: ${verdict.reason}`)
    sets.add(hex(block.signedHeader.header.validatorsHash))
    trusted = stateOf(block)
  }
  t.equal(trusted.header.height, ROOT_HEIGHT + 60n, 'the client reached 60 heights above the root')
  t.equal(sets.size, 4, 'four sets signed: three changes')
  t.equal(new Set(nodes.map((n) => n.head)).size, 1, 'every node at the one chain head')
})

t.test('a skip across two set changes verifies (1/3 of the trusted set signed); across three it is not-enough-trust (bisect)', async (t) => {
  const trusted = await trustedRoot()
  const twoChanges = await lightBlockAt((nodes[1] as ChainSimulator).url, ROOT_HEIGHT + 45n)
  t.same(verifyNonAdjacent(trusted, twoChanges, nowTime(), OPTIONS), { ok: true }, 'two changes later: half the trusted power still signs')
  const threeChanges = verifyNonAdjacent(trusted, await lightBlockAt((nodes[2] as ChainSimulator).url, ROOT_HEIGHT + 60n), nowTime(), OPTIONS)
  t.equal(threeChanges.ok ? 'ok' : threeChanges.kind, 'not-enough-trust', 'three changes later: one trusted member left, under a third')
})

t.test('the latest block: header L with the commit for L - 1; RPC /commit signs L itself', async (t) => {
  const node = (nodes[0] as ChainSimulator).url
  const latest = await getJson(`${node}/cosmos/base/tendermint/v1beta1/blocks/latest`)
  const head = headerOf(latest)
  t.equal(head.height, BigInt(clock.height), 'the latest block is the clock\'s height')
  t.equal(latest.sdk_block.header.proposer_address.startsWith('gonkavalcons1'), true, 'sdk_block names the proposer in bech32')
  const below = await lightBlockAt(node, head.height - 1n)
  t.same(below.signedHeader.commit, decodeBlockJson(latest.block).lastCommit, 'the latest block\'s last_commit is the commit for L - 1')
  const rpc = await getJson(`${node}/commit?height=${head.height}`)
  t.equal(rpc.result.canonical, false, 'the head\'s commit is the seen one, not yet in a block')
  const commit = decodeBlockJson({ header: { chain_id: head.chainId, height: '1' }, last_commit: rpc.result.signed_header.commit }).lastCommit as Commit
  const block: LightBlock = { signedHeader: { header: head, commit }, validators: chain.validatorSet(Number(head.height)), nextValidators: chain.validatorSet(Number(head.height) + 1) }
  t.same(verifyAdjacent(stateOf(below), block, nowTime(), OPTIONS), { ok: true }, 'the head verifies with RPC\'s commit: V = L')
  t.equal(rpc.result.signed_header.header.app_hash, Buffer.from(head.appHash).toString('hex').toUpperCase(), 'RPC\'s header is the REST one, in hex')
  const latestSet = await getJson(`${node}/cosmos/base/tendermint/v1beta1/validatorsets/latest`)
  t.same(latestSet, await getJson(`${node}/cosmos/base/tendermint/v1beta1/validatorsets/${head.height}`), 'validatorsets/latest is the head\'s set')
  t.equal(latestSet.validators[0].address.startsWith('gonkavalcons1'), true, 'named by bech32 consensus addresses')
})

t.test('blocks below the chain\'s first height and above the head are refused as a node refuses them', async (t) => {
  const node = (nodes[0] as ChainSimulator).url
  const pruned = await fetch(`${node}/cosmos/base/tendermint/v1beta1/blocks/${chain.firstHeight}`)
  t.equal(pruned.status, 500, 'the first height has no last commit of the chain: not available')
  const future = await fetch(`${node}/cosmos/base/tendermint/v1beta1/blocks/${clock.height + 1}`)
  t.equal(future.status, 400, 'above the head')
})

t.test('RPC /commit and /validators as CometBFT 0.38 answers them: JSON-RPC over GET, errors as 500', async (t) => {
  const node = (nodes[0] as ChainSimulator).url
  const head = clock.height
  const commit = await getJson(`${node}/commit?height=${head - 3}`)
  t.match(commit, { jsonrpc: '2.0', id: -1, result: { canonical: true } }, 'below the head: the canonical commit')
  const signed = rpcSignedHeader(commit.result)
  t.same(signed, { header: chain.block(head - 3).header, commit: chain.block(head - 3).commit }, 'the header and its own commit, field for field')
  t.same(rpcSignedHeader((await getJson(`${node}/commit`)).result).header.height, BigInt(head), 'no height: the head')
  const pages: any[] = []
  for (let page = 1; page <= 2; page++) pages.push(await getJson(`${node}/validators?height=${head}&per_page=3&page=${page}`))
  t.match(pages[0], { jsonrpc: '2.0', id: -1, result: { block_height: String(head), count: '3', total: '4' } }, 'a page of 3 of the 4')
  t.match(pages[1], { result: { count: '1', total: '4' } }, 'the rest on page 2')
  t.match(pages[0].result.validators[0], { address: /^[0-9A-F]{40}$/, pub_key: { type: 'tendermint/PubKeyEd25519' }, voting_power: /^\d+$/, proposer_priority: '0' })
  const set = newValidatorSet(pages.flatMap((p) => rpcValidatorPage(p.result).validators))
  t.same(validatorSetHash(set), chain.block(head).header.validatorsHash, 'the pages make the set the header names')
  t.equal((await getJson(`${node}/validators`)).result.block_height, String(head + 1), 'no height: the next set, known once the head is committed')
  t.equal((await getJson(`${node}/validators?height=${head + 1}`)).result.validators.length, 4, 'the default page (30) holds the whole set')
  const errors: Array<[string, string]> = [
    [`/commit?height=${head + 1}`, `height ${head + 1} must be less than or equal to the current blockchain height ${head}`],
    [`/validators?height=${head + 2}`, `height ${head + 2} must be less than or equal to the current blockchain height ${head + 1}`],
    ['/commit?height=0', 'height must be greater than 0, but got 0'],
    ['/commit?height=x', 'error converting http params to arguments: "x" is not an integer'],
    [`/commit?height=${chain.firstHeight}`, `height ${chain.firstHeight} is not available, lowest height is ${chain.firstHeight + 1}`],
    [`/validators?height=${head}&per_page=3&page=3`, 'page should be within [1, 2] range, given 3']
  ]
  for (const [path, data] of errors) {
    const answer = await fetch(`${node}${path}`)
    t.equal(answer.status, 500, `${path}: 500`)
    t.same(await answer.json(), { jsonrpc: '2.0', id: -1, error: { code: -32603, message: 'Internal error', data } }, `${path}: ${data}`)
  }
})
