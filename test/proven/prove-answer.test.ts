import t from 'tap'
import { ChainClient } from '../../src/chain/client.js'
import { firstHonestAnswer, proveAnswer, type AnswerProof } from '../../src/proven/prove-answer.js'
import { proveValue, type StoreKey } from '../../src/proven/prove-value.js'
import { provenRoute, type ProvenRoute, type RouteRequest } from '../../src/proven/proven-routes.js'
import { BlockClock } from '../../harness/chain-simulator/block-clock.js'
import { CREATED_AT } from '../../harness/chain-simulator/data/epochs.js'
import { SignedChain } from '../../harness/chain-simulator/signed-chain.js'
import { startChainSimulator, type ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { buildTestApp } from '../fixtures/app.js'
import { verifiedHashes } from '../fixtures/proven/verified-hashes.js'

// An answer judged over real sockets: edge-api's answer at V (a replica whose node's head is
// V, on a listening socket), its values proven at V from two nodes of one signed simulated
// chain, one of which forges values (harness/chain-simulator/lies.ts, forgedValue: a changed
// value with the true proof). The liar is named and passed over; every node lying fails.

const clock = new BlockClock()
const chain = new SignedChain({ firstHeight: CREATED_AT - 2 })
const V = clock.height - 10
let honest: ChainSimulator
let liar: ChainSimulator
let atV: ChainSimulator
let client: ChainClient
let hashes: Awaited<ReturnType<typeof verifiedHashes>>
let base: string
t.before(async () => {
  honest = await startChainSimulator(0, { clock, chain })
  liar = await startChainSimulator(0, { clock, chain })
  liar.lies.forgedValue = true
  atV = await startChainSimulator(0, { clock, chain, lag: clock.height - V })
  client = new ChainClient({ baseUrl: [honest.url, liar.url], timeoutMs: 30_000, concurrency: 8 })
  hashes = await verifiedHashes(honest.url, [V])
  const { app } = await buildTestApp(t, { sim: atV })
  base = await app.listen({ port: 0, host: '127.0.0.1' })
})
t.teardown(async () => { await Promise.all([client.close(), honest.close(), liar.close(), atV.close()]) })
t.afterEach(() => { atV.clearFaults() })

const LATEST = provenRoute('/v1/epochs/latest') as ProvenRoute
const PARTICIPANTS = provenRoute('/v1/epochs/{epoch}/participants') as ProvenRoute
const atHeight = (height: number) => (node: number) => async (key: StoreKey) => proveValue(client.fromNode(node), hashes, key, height)
const prove = atHeight(V)
const request: RouteRequest = { params: {}, height: V }

async function answerOf (path: string): Promise<Record<string, any>> {
  const res = await fetch(base + path, { signal: AbortSignal.timeout(10_000) })
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return await res.json() as Record<string, any>
}

t.test('an honest node: verified with its key count; a route with a list no proof covers: unverified, range', async (t) => {
  t.same(await proveAnswer(LATEST, request, await answerOf('/v1/epochs/latest'), prove(0)), { kind: 'verified', keys: 5 })
  t.same(await proveAnswer(PARTICIPANTS, { params: { epoch: '42' }, height: V }, await answerOf('/v1/epochs/42/participants'), prove(0)), { kind: 'unproven', reason: 'range' })
})

t.test('a forged value, or an answer its proofs contradict: a lie naming what', async (t) => {
  const answer = await answerOf('/v1/epochs/latest')
  t.match(await proveAnswer(LATEST, request, answer, prove(1)), { kind: 'lie', detail: /^a forged proof: / })
  t.match(await proveAnswer(LATEST, request, { ...answer, block_height: V - 1 }, prove(0)), { kind: 'lie', detail: /^the answer disagrees with its proofs at \/block_height/ })
})

t.test('no verified header for V + 1: unverified, not-yet (nobody\'s lie)', async (t) => {
  t.same(await proveAnswer(LATEST, { params: {}, height: V + 1 }, await answerOf('/v1/epochs/latest'), atHeight(V + 1)(1)), { kind: 'unproven', reason: 'not-yet' })
})

t.test('failover: the liar named once and passed over, the honest node\'s answer served', async (t) => {
  const answer = await answerOf('/v1/epochs/latest')
  const lies: number[] = []
  const judge = async (node: number): Promise<{ answer: string, proof: AnswerProof }> => ({ answer: `from ${node}`, proof: await proveAnswer(LATEST, request, answer, prove(node)) })
  const served = await firstHonestAnswer([1, 0], judge, (node) => { lies.push(node) })
  t.same(served, { answer: 'from 0', outcome: { kind: 'verified', keys: 5 } })
  t.same(lies, [1], 'the liar, once')
  const onlyLiar = await firstHonestAnswer([1], judge, (node) => { lies.push(node) })
  t.equal(onlyLiar.answer, undefined, 'every node lying: no answer, never the forged one')
  t.match(onlyLiar.outcome, { kind: 'failed', detail: /^a forged proof: / })
  t.same(await firstHonestAnswer([], judge, () => {}), { answer: undefined, outcome: { kind: 'failed', detail: 'no chain node to ask' } })
})
