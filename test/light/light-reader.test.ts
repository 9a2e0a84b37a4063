import t from 'tap'
import { KEPT_SETS, LightReader, type NodeGet, type NodeRpc } from '../../src/light/light-reader.js'
import { validatorSetHash } from '../../src/light/validator-set-hash.js'
import { blockJson, validatorSetJson } from '../../harness/chain-simulator/chain-json.js'
import { chainAnswer } from '../../harness/chain-simulator/chain-routes.js'
import { noLies } from '../../harness/chain-simulator/lies.js'
import { LATEST_HEIGHT } from '../../harness/chain-simulator/data/epochs.js'
import { SignedChain } from '../../harness/chain-simulator/signed-chain.js'

// The cursor's reads: blocks by height, a set fetched only for a hash not met before (and kept
// only when it hashes to it), every page of it. A node here is a function over a signed chain
// (the cursor's tests read the simulator over sockets).

const chain = new SignedChain({ epochLength: 2, firstHeight: LATEST_HEIGHT - 40 })
const TOP = LATEST_HEIGHT - 10

/** A node of `chain`; `setAt` chooses which height's set it serves when asked for one. */
function node (setAt = (height: number): number => height): { get: NodeGet, asked: string[] } {
  const asked: string[] = []
  const get: NodeGet = async (_node, path) => {
    asked.push(path)
    const url = new URL(path, 'http://node')
    const height = Number(url.pathname.split('/').at(-1))
    if (url.pathname.includes('/blocks/')) {
      const { header, blockId } = chain.block(height)
      return blockJson(header, blockId, chain.block(height - 1).commit)
    }
    return validatorSetJson(height, chain.validatorSet(setAt(height)), url)
  }
  return { get, asked }
}

t.test('a light block from two blocks and the sets they name; a set met before is not fetched again', async (t) => {
  const { get, asked } = node()
  const reader = new LightReader(get)
  const fetch = reader.fetcher(0, new Map())
  const block = await fetch(BigInt(TOP))
  t.same(block.signedHeader.header, chain.block(TOP).header)
  t.same(block.signedHeader.commit, chain.block(TOP).commit, 'the commit from the block above')
  t.same(block.validators, chain.validatorSet(TOP))
  t.same(block.nextValidators, chain.validatorSet(TOP + 1))
  const sets = (): number => asked.filter((p) => p.includes('validatorsets')).length
  const fetched = sets()
  await fetch(BigInt(TOP))
  t.equal(sets(), fetched, 'the same sets again: none fetched')
  const known = new Map([[BigInt(TOP), await reader.block(0, BigInt(TOP))]])
  asked.length = 0
  await reader.fetcher(0, known)(BigInt(TOP - 1))
  t.same(asked.filter((p) => p.includes('/blocks/')), [`/cosmos/base/tendermint/v1beta1/blocks/${TOP - 1}`], 'a block already known is not fetched')
})

t.test(`a wrong set is handed over but not kept; only ${KEPT_SETS} sets are kept`, async (t) => {
  const wrong = node((height) => height - 2)
  const reader = new LightReader(wrong.get)
  const named = chain.block(TOP).header.validatorsHash
  const set = await reader.set(0, BigInt(TOP), named)
  t.not(Buffer.compare(validatorSetHash(set), named), 0, 'the node\'s set, not the one named')
  await reader.set(0, BigInt(TOP), named)
  t.equal(wrong.asked.length, 2, 'asked again: a wrong set is never kept')

  const honest = node()
  const keeper = new LightReader(honest.get)
  // Epochs of 2 blocks: each height in turn names a new set.
  for (let h = TOP - 2 * KEPT_SETS; h <= TOP; h += 2) await keeper.set(0, BigInt(h), chain.block(h).header.validatorsHash)
  const before = honest.asked.length
  await keeper.set(0, BigInt(TOP), chain.block(TOP).header.validatorsHash)
  t.equal(honest.asked.length, before, 'the newest kept')
  await keeper.set(0, BigInt(TOP - 2 * KEPT_SETS), chain.block(TOP - 2 * KEPT_SETS).header.validatorsHash)
  t.equal(honest.asked.length, before + 1, 'the oldest forgotten')
})

t.test('every page of a set; a set with no end, a block carrying no commit: refused', async (t) => {
  const pages: unknown[] = [
    { validators: [{ pub_key: { key: Buffer.alloc(32, 1).toString('base64') }, voting_power: '5' }], pagination: { total: '2' } },
    { validators: [], pagination: { total: '2' } }
  ]
  const short = new LightReader(async () => pages.shift())
  t.equal((await short.set(0, 5n, Buffer.alloc(32))).validators.length, 1, 'an empty page ends the set')
  const endless = new LightReader(async () => ({ validators: [{ pub_key: { key: Buffer.alloc(32, 1).toString('base64') }, voting_power: '5' }], pagination: { total: '1000' } }))
  await t.rejects(endless.set(0, 5n, Buffer.alloc(32)), { name: 'LightJsonError', message: 'the validator set at 5 has more than 20 pages' })
  const { get } = node()
  const noCommit = new LightReader(async (n, path) => {
    const answer = await get(n, path) as { block: object }
    return path.endsWith(`/${TOP + 1}`) ? { ...answer, block: { ...answer.block, last_commit: null } } : answer
  })
  await t.rejects(noCommit.fetcher(0, new Map())(BigInt(TOP)), { message: `the block at ${TOP + 1} carries no commit for ${TOP}` })
})

t.test('with an RPC endpoint: a header with its own commit (/commit), the sets from /validators in pages of 100; a node without one reads its gateway', async (t) => {
  const sets = new SignedChain({ validators: 100, epochLength: 2, firstHeight: LATEST_HEIGHT - 40 })
  const heights = { height: LATEST_HEIGHT, head: LATEST_HEIGHT, lowest: 1 }
  const rpcAsked: string[] = []
  const rpc: NodeRpc = {
    has: (n) => n === 1,
    get: async (_node, path) => {
      rpcAsked.push(path)
      const url = new URL(path, 'http://node')
      return (chainAnswer(sets, noLies(), url.pathname, url, heights) as { result: unknown }).result
    }
  }
  const rest = node()
  const reader = new LightReader(rest.get, rpc)
  t.same([reader.seesHeadCommit(0), reader.seesHeadCommit(1)], [false, true], 'only the node with an endpoint sees its head\'s commit')
  t.notOk(new LightReader(rest.get).seesHeadCommit(0), 'none without endpoints')
  const block = await reader.fetcher(1, new Map())(BigInt(TOP))
  t.same(block.signedHeader, { header: sets.block(TOP).header, commit: sets.block(TOP).commit }, 'the header and its own commit')
  t.same([block.validators, block.nextValidators], [sets.validatorSet(TOP), sets.validatorSet(TOP + 1)], 'both sets, 100 validators each')
  t.same(rpcAsked, [`/commit?height=${TOP}`, `/validators?height=${TOP}&per_page=100&page=1`, `/validators?height=${TOP + 1}&per_page=100&page=1`], 'one /commit, one page per set')
  t.same(rest.asked, [], 'nothing from its gateway')
  const twoPages: NodeRpc = { has: () => true, get: async (_node, path) => ({ validators: [{ pub_key: { type: 'tendermint/PubKeyEd25519', value: Buffer.alloc(32, path.endsWith('page=1') ? 1 : 2).toString('base64') }, voting_power: '5' }], total: '2' }) }
  t.equal((await new LightReader(rest.get, twoPages).set(0, 5n, Buffer.alloc(32))).validators.length, 2, 'page after page until the total')
  await reader.fetcher(0, new Map())(BigInt(TOP))
  t.ok(rest.asked.some((p) => p.includes('/blocks/')), 'the node without one: its gateway\'s blocks')
  t.equal(rpcAsked.length, 3, 'and not the other node\'s endpoint')
})
