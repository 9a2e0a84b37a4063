import t from 'tap'
import { bundleProblem, proofBundle, type ProofBundleJson } from '../../src/proven/proof-bundle.js'
import { ACTIVE_PARTICIPANTS, CREATED_AT, CURRENT_EPOCH, encodeActiveParticipants, GENESIS_EPOCH } from '../../harness/chain-simulator/data/epochs.js'
import { activeParticipantsKey } from '../../src/chain/active-participants.js'
import { DEFAULT_TRUST_LEVEL } from '../../src/light/commit-light.js'
import type { LightBlock, LightOptions } from '../../src/light/light-block.js'
import { trustFromRoot } from '../../src/light/trust-root.js'
import { verifyLightBlock } from '../../src/light/verifier.js'
import { lightBlock } from '../fixtures/light/light-block-json.js'
import { buildTestApp } from '../fixtures/app.js'
import { getJson } from '../fixtures/light/gateway-blocks.js'
import { listeningOnSignedChain } from '../fixtures/light/signed-app.js'

// `?proof=1` over a real socket against the signed simulated chain, checked as a client
// checks it: every read of the bundle verifies with src/verify's ICS23 checker under the app
// hash of the chain's signed header (the chain's own, not the bundle's word); a node that
// forges the value gets no bundle served.

t.setTimeout(300_000)

const ABCI = '/cosmos/base/tendermint/v1beta1/abci_query'
const PATH = `/v1/epochs/${CURRENT_EPOCH}/participants`
const OPTIONS: LightOptions = { trustingPeriodMs: 14 * 24 * 3600 * 1000, maxClockDriftMs: 10_000, trustLevel: DEFAULT_TRUST_LEVEL, linkLastBlockId: true }
const now = (): { seconds: number, nanos: number } => ({ seconds: Math.floor(Date.now() / 1000), nanos: 0 })
// From a few blocks below the entry's created height, so the header after it is signed.
// No answer cache: the faults below change what the node answers at one height.
const { chain, sim, get } = await listeningOnSignedChain(t, { firstHeight: CREATED_AT - 5, env: { EDGE_API_CACHE_SIZE: '0' } })
/** The app hash of state CREATED_AT: the signed header CREATED_AT + 1's, as the chain signed it. */
const signedAppHash = (): Uint8Array => chain.block(CREATED_AT + 1).header.appHash

t.test('?proof=1: the answer gains the store value and its proof ops, which verify under the signed header\'s app hash', async (t) => {
  const plain = await get(PATH)
  t.equal(plain.status, 200)
  t.notOk('proof' in plain.body, 'without ?proof=1, no bundle')
  const res = await get(`${PATH}?proof=1`)
  t.equal(res.status, 200)
  const proof = res.body.proof as ProofBundleJson
  t.match(proof, { height: String(CREATED_AT), header_height: String(CREATED_AT + 1), app_hash: Buffer.from(signedAppHash()).toString('hex').toUpperCase() })
  t.equal(proof.reads.length, 1)
  t.same(proof.reads.map((r) => [r.store, r.proof_ops.map((op) => op.type)]), [['inference', ['ics23:iavl', 'ics23:simple']]])
  t.equal(Buffer.from(proof.reads[0]?.value as string, 'base64').toString('hex'), res.body.active_participants_bytes, 'the value the answer was derived from')
  t.same(Buffer.from(proof.reads[0]?.value as string, 'base64'), Buffer.from(encodeActiveParticipants(ACTIVE_PARTICIPANTS)))
  t.equal(bundleProblem(proof, signedAppHash()), undefined, 'every read verifies under the signed app hash')
  // What a client catches: the value changed, the key changed, another app hash.
  const read = proof.reads[0] as ProofBundleJson['reads'][number]
  const forged = { ...proof, reads: [{ ...read, value: Buffer.from('forged').toString('base64') }] }
  t.match(bundleProblem(forged, signedAppHash()), /^reads\[0\] \(inference .*\): /, 'a changed value does not verify')
  t.match(bundleProblem(proof, chain.block(CREATED_AT + 2).header.appHash), /^reads\[0\]/, 'nor under another header\'s app hash')
  t.match(bundleProblem({ ...proof, reads: [{ ...read, key: 'not base64!' }] }, signedAppHash()), /reads\[0\]\.key is not standard base64/)
})

t.test('a node that forges the value with the true proof: the answer is refused (502), its bundle never served', async (t) => {
  sim.lies.forgedValue = true
  const res = await get(`/v1/epochs/${CURRENT_EPOCH}/participants?proof=1`)
  t.equal(res.status, 502)
  t.match(res.body.message, new RegExp(`^the chain node's proof does not verify against block ${CREATED_AT + 1}'s app hash: reads\\[0\\]`))
  t.notOk('active_participants' in res.body)
})

t.test('no proof to give: genesis (404), no proof ops or no block after it yet (503), no ops at all (502)', async (t) => {
  const genesis = await get(`/v1/epochs/${GENESIS_EPOCH}/participants?proof=1`)
  t.same([genesis.status, genesis.body.message], [404, 'no proof: the entry was written at genesis (height 0), which no store version proves'])
  const value = Buffer.from(encodeActiveParticipants(ACTIVE_PARTICIPANTS)).toString('base64')
  sim.override(ABCI, { code: 0, value, proof_ops: null, height: String(CREATED_AT) })
  const noOps = await get(`/v1/epochs/${CURRENT_EPOCH}/participants?proof=1`)
  t.same([noOps.status, noOps.body.message, noOps.headers['retry-after']], [503, 'no proof yet: the chain node gave no proof ops', '1'])
  sim.override(ABCI, { code: 0, value, proof_ops: { ops: null }, height: String(CREATED_AT) })
  const emptyOps = await get(`/v1/epochs/${CURRENT_EPOCH}/participants?proof=1`)
  t.equal(emptyOps.status, 502, 'an empty list of ops proves nothing')
  sim.clearFaults()
  sim.fail(`/cosmos/base/tendermint/v1beta1/blocks/${CREATED_AT + 1}`, 3, 'not yet')
  const noBlock = await get(`/v1/epochs/${CURRENT_EPOCH}/participants?proof=1`)
  t.same([noBlock.status, noBlock.body.message], [503, `no proof yet: the block after ${CREATED_AT} is not available`])
  const bad = await get(`${PATH}?proof=yes`)
  t.equal(bad.status, 400, '?proof= takes only 1')
})

t.test('with the answer cache, ?proof=1 is part of the key: the plain answer cached is not served for it', async (t) => {
  const { app: cached } = await buildTestApp(t, { sim, env: { EDGE_API_CACHE_SIZE: '1MiB' } })
  t.equal((await cached.inject(PATH)).statusCode, 200)
  const proven = await cached.inject(`${PATH}?proof=1`)
  t.equal(proven.headers['x-cache'], 'miss')
  t.ok('proof' in proven.json(), 'built with its bundle')
  t.equal((await cached.inject(`${PATH}?proof=1`)).headers['x-cache'], 'hit', 'and cached as its own answer')
})

t.test('a key proven absent: value null, checked as a non-existence proof', async (t) => {
  const key = Buffer.from(activeParticipantsKey(999n)).toString('base64')
  const answer = await getJson(`${sim.url}${ABCI}?path=store/inference/key&data=${encodeURIComponent(key)}&height=${CREATED_AT}&prove=true`)
  const bundle = proofBundle(BigInt(CREATED_AT), signedAppHash(), [{ store: 'inference', key, value: null, proof_ops: answer.proof_ops.ops }])
  t.equal(bundleProblem(bundle, signedAppHash()), undefined, 'proven absent')
  t.match(bundleProblem({ ...bundle, reads: [{ ...(bundle.reads[0] as ProofBundleJson['reads'][number]), value: 'AA==' }] }, signedAppHash()), /^reads\[0\]/, 'an absence proof proves no value')
})

t.test('the README\'s check, step by step: the header the bundle names verified from a trust root, then the bundle under its app hash', async (t) => {
  const answer = (await get(`${PATH}?proof=1`)).body
  const h = Number(answer.proof.header_height)
  const lightAt = async (height: number): Promise<LightBlock> => lightBlock({
    signed_header: (await get(`/v1/light/signed-header/${height}`)).body.signed_header,
    validators: (await get(`/v1/light/validators/${height}`)).body,
    next_validators: (await get(`/v1/light/validators/${height + 1}`)).body
  })
  const root = trustFromRoot({ height: BigInt(h - 1), hash: chain.block(h - 1).blockId.hash }, await lightAt(h - 1), now(), OPTIONS.trustingPeriodMs)
  if (!root.ok) throw new Error(root.reason)
  const block = await lightAt(h)
  t.same(verifyLightBlock(root.state, block, now(), OPTIONS), { ok: true }, 'the header verifies')
  t.equal(bundleProblem(answer.proof, block.signedHeader.header.appHash), undefined, 'the bundle verifies under its app hash')
})

t.test('proofBundle: the header that proves a bundle is the one above its store version', async (t) => {
  t.same(proofBundle(7n, new Uint8Array([0xab, 0x01]), []), { height: '7', app_hash: 'AB01', header_height: '8', reads: [] })
})
