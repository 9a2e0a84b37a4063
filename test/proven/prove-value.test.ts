import t from 'tap'
import { ChainClient } from '../../src/chain/client.js'
import type { ChainObserver } from '../../src/chain/types.js'
import { ChainStatusError, ChainUnavailableError } from '../../src/errors.js'
import { proveValue, type ProvenRead } from '../../src/proven/prove-value.js'
import { activeParticipantsKey, effectiveEpochIndexKey, epochKey, INFERENCE_STORE } from '../../src/proven/store-keys.js'
import { BlockClock } from '../../harness/chain-simulator/block-clock.js'
import { ACTIVE_PARTICIPANTS, CURRENT_EPOCH, encodeActiveParticipants } from '../../harness/chain-simulator/data/epochs.js'
import { SignedChain } from '../../harness/chain-simulator/signed-chain.js'
import { startChainSimulator, type ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { getJson } from '../fixtures/light/gateway-blocks.js'
import { verifiedHashes } from '../fixtures/proven/verified-hashes.js'

// proveValue over real sockets against the simulated chain (harness/chain-simulator/), whose
// headers are signed and whose app hash is the root of the store its proofs are built from:
// an honest node's value is proven, a node's lie is named, a key that is absent is proven
// absent, and without a verified header V + 1 nothing is asked.

const ABCI = '/cosmos/base/tendermint/v1beta1/abci_query'
const clock = new BlockClock()
const chain = new SignedChain()
const V = clock.height - 10
const exchanges: Array<[number, string]> = []
const observer: ChainObserver = { exchange: (node, outcome) => { exchanges.push([node, outcome]) } }
let honest: ChainSimulator
let liar: ChainSimulator
let client: ChainClient
let hashes: Awaited<ReturnType<typeof verifiedHashes>>
t.before(async () => {
  honest = await startChainSimulator(0, { clock, chain })
  liar = await startChainSimulator(0, { clock, chain })
  client = new ChainClient({ baseUrl: [honest.url, liar.url], timeoutMs: 30_000, concurrency: 4, observer, nodeBackoff: { initialMs: 60_000, maxMs: 60_000 } })
  hashes = await verifiedHashes(honest.url, [V])
})
t.teardown(async () => { await Promise.all([client.close(), honest.close(), liar.close()]) })
t.afterEach(() => {
  liar.clearFaults()
  honest.clearFaults()
  honest.lowest = 1
})

const participants = { store: INFERENCE_STORE, key: activeParticipantsKey(BigInt(CURRENT_EPOCH)) }
const kind = (read: ProvenRead): string => read.kind
/** The honest node's raw answer for `key` at V, to hand to the liar as its own. */
const honestAnswer = async (key: Uint8Array): Promise<Record<string, unknown>> =>
  getJson(`${honest.url}${ABCI}?path=store/inference/key&data=${encodeURIComponent(Buffer.from(key).toString('base64'))}&height=${V}&prove=true`)

t.test('an honest node\'s value is proven, read through the chain client from the node asked (counted as its exchange)', async (t) => {
  exchanges.length = 0
  const read = await proveValue(client.fromNode(0), hashes, participants, V)
  t.same(read, { kind: 'value', value: Buffer.from(encodeActiveParticipants(ACTIVE_PARTICIPANTS)) }, 'the stored ActiveParticipants')
  t.same(exchanges, [[1, 'ok']], 'one exchange, with node 1, counted by the observer')
  t.match(honest.requests.at(-1), /prove=true/, 'asked with prove=true')
  t.match(honest.requests.at(-1), new RegExp(`height=${V}(&|$)`), 'at V')
  const epoch = await proveValue(client.fromNode(1), hashes, { store: INFERENCE_STORE, key: effectiveEpochIndexKey() }, V)
  t.same(epoch, { kind: 'value', value: Buffer.from('000000000000002a', 'hex') }, 'the other node: EffectiveEpochIndex, 42 as 8 bytes big-endian')
})

t.test('a changed value with the true value\'s proof: forged, named by the proof check', async (t) => {
  liar.lies.forgedValue = true
  const read = await proveValue(client.fromNode(1), hashes, participants, V)
  t.equal(kind(read), 'forged', 'the liar is caught')
  t.match(read, { reason: /proof did not verify existence|calculated root hash is invalid/ }, 'with the verifier\'s reason')
  t.equal(kind(await proveValue(client.fromNode(0), hashes, participants, V)), 'value', 'the honest node is not affected')
})

t.test('an absent key is proven absent; saying an existing key is absent is forged', async (t) => {
  const nextEpoch = { store: INFERENCE_STORE, key: epochKey(BigInt(CURRENT_EPOCH + 1)) }
  t.same(await proveValue(client.fromNode(0), hashes, nextEpoch, V), { kind: 'absent' }, 'no Epoch 43: proven absent by its neighbours')
  t.same(await proveValue(client.fromNode(0), hashes, { store: INFERENCE_STORE, key: Buffer.from('zzzz') }, V), { kind: 'absent' }, 'a key above every key: only a left neighbour')
  t.same(await proveValue(client.fromNode(0), hashes, { store: INFERENCE_STORE, key: Uint8Array.of(0) }, V), { kind: 'absent' }, 'a key below every key: only a right neighbour')
  // The liar answers the participants' key with the true absence proof of another key.
  liar.override(ABCI, { ...(await honestAnswer(epochKey(BigInt(CURRENT_EPOCH + 1)))), value: null })
  const read = await proveValue(client.fromNode(1), hashes, participants, V)
  t.equal(kind(read), 'forged', 'a hidden value is caught')
  t.match(read, { reason: /key mismatch/ }, 'the proof is of another key')
})

t.test('no verified header V + 1: not-yet, and the node is not asked', async (t) => {
  const before = honest.requests.length
  t.same(await proveValue(client.fromNode(0), hashes, participants, V + 1), { kind: 'not-yet' })
  t.equal(honest.requests.length, before, 'no request sent')
})

t.test('a node that no longer holds V: pruned, not a lie', async (t) => {
  honest.lowest = V + 1
  const read = await proveValue(client.fromNode(0), hashes, participants, V)
  t.equal(kind(read), 'pruned')
  t.match(read, { reason: /failed to load state at height/ }, 'with the node\'s words')
  honest.lowest = 1
  liar.override(ABCI, { code: 1, log: 'proof is unexpectedly empty; ensure height has not been pruned', height: String(V) })
  t.match(await proveValue(client.fromNode(1), hashes, participants, V), { kind: 'pruned', reason: /has not been pruned/ }, 'or as an ABCI answer\'s code and log')
})

t.test('every other way an answer is not proven is forged', async (t) => {
  const truth = await honestAnswer(participants.key)
  liar.override(ABCI, { ...truth, height: String(V + 1) })
  t.match(await proveValue(client.fromNode(1), hashes, participants, V), { kind: 'forged', reason: `answered at height ${V + 1}, asked ${V}` }, 'another height')
  liar.override(ABCI, { ...truth, height: undefined })
  t.match(await proveValue(client.fromNode(1), hashes, participants, V), { kind: 'forged', reason: /answered at height \(none\)/ }, 'no height')
  liar.override(ABCI, { ...truth, proof_ops: null })
  t.match(await proveValue(client.fromNode(1), hashes, participants, V), { kind: 'forged', reason: /no proof ops/ }, 'no proof')
  liar.override(ABCI, { ...truth, code: undefined, proof_ops: { ops: [{}] } })
  t.match(await proveValue(client.fromNode(1), hashes, participants, V), { kind: 'forged', reason: /unrecognized proof type/ }, 'a proof op of no type')
  liar.override(ABCI, { ...truth, proof_ops: { ops: [{ type: 'ics23:iavl' }] } })
  t.match(await proveValue(client.fromNode(1), hashes, participants, V), { kind: 'forged', reason: /decoding proof|could not calculate|did not verify/ }, 'an empty proof op')
  liar.override(ABCI, { ...truth, proof_ops: { ops: [(truth.proof_ops as { ops: unknown[] }).ops[0]] } })
  t.match(await proveValue(client.fromNode(1), hashes, participants, V), { kind: 'forged', reason: /calculated root hash is invalid|keypath not consumed/ }, 'the IAVL op alone: the module root is not the app hash')
})

t.test('a chain error is the read\'s error: no failover to another node, an ABCI error code is the gateway\'s', async (t) => {
  liar.override(ABCI, { code: 18, log: 'invalid request', height: String(V) })
  await t.rejects(proveValue(client.fromNode(1), hashes, participants, V), ChainStatusError, 'an error code that is not a pruned height')
  liar.override(ABCI, { code: 18, height: String(V) })
  await t.rejects(proveValue(client.fromNode(1), hashes, participants, V), new ChainStatusError(2, 'abci_query answered code 18 for a proven read: '), 'with no log')
  liar.clearFaults()
  liar.fail(ABCI, 5, 'failed to load state at height 1; version does not exist (latest height: 2): not found')
  t.match(await proveValue(client.fromNode(1), hashes, participants, V), { kind: 'pruned' }, 'the gateway\'s own error for a pruned height')
  liar.clearFaults()
  liar.fail(ABCI, 13, 'internal')
  await t.rejects(proveValue(client.fromNode(1), hashes, participants, V), ChainStatusError, 'any other gateway error')
  liar.clearFaults()
  const before = honest.requests.length
  liar.drop(ABCI)
  await t.rejects(proveValue(client.fromNode(1), hashes, participants, V), ChainUnavailableError, 'a node that drops the connection')
  t.equal(honest.requests.length, before, 'the other node was not asked: the proof is this node\'s')
  t.throws(() => client.fromNode(2), RangeError, 'a node that does not exist')
})
