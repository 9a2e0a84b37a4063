import t from 'tap'
import { DEFAULT_TRUST_LEVEL } from '../../../src/light/commit-light.js'
import type { LightBlock, LightOptions, TrustedState } from '../../../src/light/light-block.js'
import { trustFromRoot } from '../../../src/light/trust-root.js'
import { verifyAdjacent, verifyNonAdjacent } from '../../../src/light/verifier.js'
import { getJson } from '../../fixtures/light/gateway-blocks.js'
import { signedHeader, validatorSet } from '../../fixtures/light/light-block-json.js'
import { listeningOnSignedChain } from '../../fixtures/light/signed-app.js'

// /v1/light/… over a real socket against the signed simulated chain, read by a client that
// verifies what it gets: tendermint-rs's JSON reader (test/fixtures/light/light-block-json.ts,
// CometBFT RPC's shape) and src/light's verifier, from a trust root the client holds.

t.setTimeout(300_000)

const OPTIONS: LightOptions = { trustingPeriodMs: 14 * 24 * 3600 * 1000, maxClockDriftMs: 10_000, trustLevel: DEFAULT_TRUST_LEVEL, linkLastBlockId: true }
const nowTime = (): { seconds: number, nanos: number } => ({ seconds: Math.floor(Date.now() / 1000), nanos: 0 })
const SETS = '/cosmos/base/tendermint/v1beta1/validatorsets/'
const BLOCKS = '/cosmos/base/tendermint/v1beta1/blocks/'

const { clock, chain, sim, client, get } = await listeningOnSignedChain(t, { env: { EDGE_API_CACHE_SIZE: '1MiB' } })

/** The light block at `height` as a client assembles it from /v1/light: its signed header, the sets at H and H + 1. */
async function served (height: number): Promise<LightBlock> {
  const [signed, validators, next] = await Promise.all([
    get(`/v1/light/signed-header/${height}`), get(`/v1/light/validators/${height}`), get(`/v1/light/validators/${height + 1}`)
  ])
  for (const res of [signed, validators, next]) if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`)
  return { signedHeader: signedHeader(signed.body.signed_header), validators: validatorSet(validators.body), nextValidators: validatorSet(next.body) }
}

const ROOT = clock.height - 40
/** The client's trust root: the chain's own hash of header ROOT (not edge-api's word), checked against what is served. */
async function trusted (): Promise<TrustedState> {
  const outcome = trustFromRoot({ height: BigInt(ROOT), hash: chain.block(ROOT).blockId.hash }, await served(ROOT), nowTime(), OPTIONS.trustingPeriodMs)
  if (!outcome.ok) throw new Error(outcome.reason)
  return outcome.state
}

t.test('a client advances from its trust root with what /v1/light serves: adjacent steps across a set change, and a skip', async (t) => {
  let state = await trusted()
  const hashes = new Set<string>()
  for (let height = ROOT + 1; height <= ROOT + 25; height++) {
    const block = await served(height)
    const verdict = verifyAdjacent(state, block, nowTime(), OPTIONS)
    if (!verdict.ok) t.fail(`height ${height}: ${verdict.reason}`)
    hashes.add(Buffer.from(block.signedHeader.header.validatorsHash).toString('hex'))
    state = { header: block.signedHeader.header, nextValidators: block.nextValidators }
  }
  t.equal(state.header.height, BigInt(ROOT + 25), 'every step verified')
  t.ok(hashes.size >= 2, `the steps crossed a validator-set change (${hashes.size} sets)`)
  t.same(verifyNonAdjacent(await trusted(), await served(ROOT + 30), nowTime(), OPTIONS), { ok: true }, 'a skip of 30 heights verifies')
})

t.test('the signed header is CometBFT RPC /commit\'s result, byte for byte the JSON the node\'s own RPC writes', async (t) => {
  const height = ROOT + 3
  const rpc = await getJson(`${sim.url}/commit?height=${height}`)
  const ours = await get(`/v1/light/signed-header/${height}`)
  t.same(ours.body, rpc.result, 'signed_header {header, commit} and canonical, as CometBFT writes them')
  t.equal(ours.headers['cache-control'], 'public, max-age=31536000, immutable', 'fixed by its height')
  const again = await get(`/v1/light/signed-header/${height}`)
  t.equal(again.headers['x-cache'], 'hit', 'the second read is the answer cache\'s')
  const sets = await get(`/v1/light/validators/${height}`)
  t.same({ block_height: sets.body.block_height, count: sets.body.count, total: sets.body.total }, { block_height: String(height), count: '4', total: '4' })
  t.match(sets.body.validators[0], { address: /^[0-9A-F]{40}$/, pub_key: { type: 'tendermint/PubKeyEd25519' }, voting_power: /^\d+$/, proposer_priority: '0' })
})

t.test('a header served with a forged app hash is served as the node gives it, and the client refuses it', async (t) => {
  // Heights no earlier test read: the answer cache keeps what it served (immutable by height).
  const height = ROOT + 32
  const skipped = await served(ROOT + 30)
  t.same(verifyNonAdjacent(await trusted(), skipped, nowTime(), OPTIONS), { ok: true })
  // From here the node lies (the header at height - 1 is read with the block at height: its commit is unchanged).
  sim.lies.forgedAppHashFrom = height
  const parent = await served(height - 1)
  t.same(verifyAdjacent({ header: skipped.signedHeader.header, nextValidators: skipped.nextValidators }, parent, nowTime(), OPTIONS), { ok: true })
  const block = await served(height)
  t.notSame(block.signedHeader.header.appHash, chain.block(height).header.appHash, 'the node\'s app hash is passed on (edge-api does not judge here)')
  const verdict = verifyAdjacent({ header: parent.signedHeader.header, nextValidators: parent.nextValidators }, block, nowTime(), OPTIONS)
  t.equal(verdict.ok ? 'ok' : verdict.kind, 'invalid', 'the commit signs another block: the client catches the lie')
})

t.test('bad heights are a 400 before any chain request', async (t) => {
  const head = client.heads.best
  t.ok(head > 0, 'the head is known')
  sim.resetCounts()
  const cases: Array<[string, RegExp]> = [
    ['/v1/light/signed-header/0', /must be a block height: an integer from 1$/],
    ['/v1/light/signed-header/-3', /must be a block height: an integer from 1$/],
    ['/v1/light/signed-header/1.5', /must be a block height: an integer from 1$/],
    ['/v1/light/validators/abc', /must be a block height: an integer from 1$/],
    ['/v1/light/signed-header/9999999999999999999', /must be a block height: an integer from 1 to 2\^63 - 1/],
    [`/v1/light/signed-header/${head}`, new RegExp(`height ${head}: the newest signed header is at ${head - 1} \\(the chain's head is ${head}\\)`)],
    [`/v1/light/validators/${head + 1}`, new RegExp(`height ${head + 1}: the newest validator set is at ${head} `)]
  ]
  for (const [path, message] of cases) {
    const res = await get(path)
    t.equal(res.status, 400, path)
    t.match(res.body.message, message, path)
  }
  t.same(sim.requests, [], 'no chain request for any of them')
})

t.test('what the chain refuses or garbles is passed on as an error, never as a signed header', async (t) => {
  const pruned = await get(`/v1/light/signed-header/${chain.firstHeight}`)
  t.equal(pruned.status, 500, 'a height the node no longer holds: its error')
  t.match(pruned.body.message, /not available/)
  const prunedSet = await get(`/v1/light/validators/${chain.firstHeight - 1}`)
  t.same([prunedSet.status, prunedSet.body.message], [500, `height ${chain.firstHeight - 1} is not available, lowest height is ${chain.firstHeight + 1}`], 'the node\'s own error, passed on')
  const height = ROOT + 35
  const above = await getJson(`${sim.url}${BLOCKS}${height + 2}`)
  sim.override(`${BLOCKS}${height + 1}`, above)
  const wrong = await get(`/v1/light/signed-header/${height}`)
  t.equal(wrong.status, 500, 'the block above carries the commit for another height')
  t.match(wrong.body.message, new RegExp(`do not make a signed header: the block above height ${height} carries the commit for height ${height + 1}`))
  sim.override(`${BLOCKS}${height + 2}`, { block: { ...above.block, last_commit: null } })
  t.match((await get(`/v1/light/signed-header/${height + 1}`)).body.message, /carries no commit/)
  sim.override(`${BLOCKS}${height + 3}`, { block: { ...above.block, header: { ...above.block.header, version: { block: '10' } } } })
  t.match((await get(`/v1/light/signed-header/${height + 3}`)).body, { message: /do not make a signed header: block protocol is incorrect: got: 10, want: 11/ }, 'a header CometBFT refuses')
  sim.override(`${SETS}${height + 4}`, { validators: [], pagination: { total: '3' } })
  const sets = await get(`/v1/light/validators/${height + 4}`)
  t.equal(sets.status, 500)
  t.match(sets.body.message, /has 3 validators, but its pages held 0/)
})
