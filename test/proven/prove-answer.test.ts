import t from 'tap'
import { firstHonestAnswer, proveAnswer, type AnswerProof } from '../../src/proven/prove-answer.js'
import { proveValue, type StoreKey } from '../../src/proven/prove-value.js'
import { provenRoute, type ProvenRoute, type RouteRequest } from '../../src/proven/proven-routes.js'
import { provingWorld } from '../fixtures/proven/proving-world.js'

// An answer judged over real sockets: edge-api's answer at V (a replica whose node's head is
// V, on a listening socket), its values proven at V from two nodes of one signed simulated
// chain, one of which forges values (harness/chain-simulator/lies.ts, forgedValue: a changed
// value with the true proof). The liar is named and passed over; every node lying fails.

const { V, liar, atV, client, hashes, base } = await provingWorld(t)
liar.lies.forgedValue = true
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

t.test('a node whose read fails is passed over when the caller says so, never named a liar; its error thrown when no node answers', async (t) => {
  const down = new Error('node 2 down')
  const judge = async (node: number): Promise<{ answer: number, proof: AnswerProof }> => {
    if (node === 2) throw down
    return { answer: node, proof: node === 1 ? { kind: 'lie', detail: 'forged' } : { kind: 'verified', keys: 1 } }
  }
  const lies: number[] = []
  const onLie = (node: number): void => { lies.push(node) }
  t.same(await firstHonestAnswer([2, 0], judge, onLie, () => true), { answer: 0, outcome: { kind: 'verified', keys: 1 } })
  await t.rejects(firstHonestAnswer([1, 2], judge, onLie, () => true), down, 'a liar and a node down: the error, never the lie')
  await t.rejects(firstHonestAnswer([2, 0], judge, onLie), down, 'by default an error ends the read')
  t.same(lies, [1], 'only the liar named')
})
