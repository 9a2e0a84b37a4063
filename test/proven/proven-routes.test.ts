import t from 'tap'
import { checkAnswer } from '../../src/proven/check-answer.js'
import { proveRoute } from '../../src/proven/prove-route.js'
import { proveValue, type StoreKey } from '../../src/proven/prove-value.js'
import { PROVEN_ROUTES, provenRoute, type ProvenRoute, type RouteRequest } from '../../src/proven/proven-routes.js'
import { PARENT_GROUP } from '../../harness/chain-simulator/data/models.js'
import { provingWorld } from '../fixtures/proven/proving-world.js'
import { getJson } from '../fixtures/light/gateway-blocks.js'

// Every proven route end to end over real sockets: edge-api's answer at V (a replica whose
// node's head is V, served on a listening socket), the route's store values proven at V from
// another node of the same simulated chain (harness/chain-simulator/data/inference-state.ts
// stores them as gonka does), and the answer checked against them. A node's lie on the
// proven read is forged; a node's lie on the REST read the answer was built from is a
// mismatch, named by the field it changed.

const { V, honest, liar, atV, client, hashes, base } = await provingWorld(t)
t.afterEach(() => {
  liar.clearFaults()
  atV.clearFaults()
})

const prove = (node: number) => async (key: StoreKey) => proveValue(client.fromNode(node), hashes, key, V)
const route = (name: string): ProvenRoute => provenRoute(name) as ProvenRoute

/** The answer to `path`: edge-api's, over a listening socket; or, for the current epoch, get_current_epoch's own. */
async function answerOf (name: string, path: string): Promise<Record<string, any>> {
  if (name === 'epoch=current') return getJson(`${atV.url}/productscience/inference/inference/get_current_epoch`)
  const res = await fetch(base + path, { signal: AbortSignal.timeout(10_000) })
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return await res.json() as Record<string, any>
}

const CASES: ReadonlyArray<{ name: string, path: string, params: Record<string, string>, keys: number }> = [
  { name: 'epoch=current', path: '', params: {}, keys: 1 },
  { name: '/v1/epochs/{epoch}/participants', path: '/v1/epochs/current/participants', params: { epoch: 'current' }, keys: 2 },
  { name: '/v1/epochs/{epoch}/participants', path: '/v1/epochs/42/participants', params: { epoch: '42' }, keys: 1 },
  // params, EffectiveEpochIndex, the active event, Epoch 43 (proven absent), Epoch 42
  { name: '/v1/epochs/latest', path: '/v1/epochs/latest', params: {}, keys: 5 },
  // EffectiveEpochIndex, the parent group, its five sub-groups (one proven absent)
  { name: '/v1/models', path: '/v1/models', params: {}, keys: 7 },
  { name: '/v1/pricing', path: '/v1/pricing', params: {}, keys: 7 }
]

t.test('every proven route: its values proven from an honest node, edge-api\'s answer at V verified against them', async (t) => {
  t.same(new Set(CASES.map((c) => c.name)), new Set(PROVEN_ROUTES.map((r) => r.route)), 'every route of the list is checked')
  for (const { name, path, params, keys } of CASES) {
    const request: RouteRequest = { params, height: V }
    const proof = await proveRoute(route(name), request, prove(0))
    if (proof.kind !== 'proven') throw new Error(`${name}: ${JSON.stringify(proof)}`)
    t.equal(proof.values.size, keys, `${path || name}: ${keys} store values proven`)
    t.same(checkAnswer(route(name), await answerOf(name, path), proof.values, request), { verdict: 'verified', keys }, `${path || name}: verified`)
  }
})

t.test('a node that changes a value on the proven read: forged, whichever route', async (t) => {
  liar.lies.forgedValue = true
  for (const r of PROVEN_ROUTES) {
    t.match(await proveRoute(r, { params: { epoch: 'current' }, height: V }, prove(1)), { kind: 'forged' }, r.route)
  }
})

t.test('a node that lies on the REST read an answer is built from: a mismatch naming the field', async (t) => {
  const pricing = route('/v1/pricing')
  const request = { params: {}, height: V }
  const proof = await proveRoute(pricing, request, prove(0))
  if (proof.kind !== 'proven') throw new Error(JSON.stringify(proof))
  atV.override('/productscience/inference/inference/current_epoch_group_data', { epoch_group_data: { ...PARENT_GROUP, unit_of_compute_price: '101' } })
  t.same(checkAnswer(pricing, await answerOf('/v1/pricing', '/v1/pricing'), proof.values, request), {
    verdict: 'mismatch',
    detail: '/models/0/price_per_token: the answer has "101000", the proofs say "100000"'
  }, 'the first field that differs')
  atV.override('/productscience/inference/inference/get_current_epoch', { epoch: '41' })
  const epoch = await proveRoute(route('epoch=current'), request, prove(0))
  if (epoch.kind !== 'proven') throw new Error(JSON.stringify(epoch))
  t.same(checkAnswer(route('epoch=current'), await answerOf('epoch=current', ''), epoch.values, request), {
    verdict: 'mismatch', detail: '/epoch: the answer has "41", the proofs say "42"'
  })
  atV.override('/productscience/inference/inference/epoch_info', { ...(await getJson(`${honest.url}/productscience/inference/inference/epoch_info`)), is_confirmation_poc_active: false, active_confirmation_poc_event: null })
  const latest = await proveRoute(route('/v1/epochs/latest'), request, prove(0))
  if (latest.kind !== 'proven') throw new Error(JSON.stringify(latest))
  t.match(checkAnswer(route('/v1/epochs/latest'), await answerOf('/v1/epochs/latest', '/v1/epochs/latest'), latest.values, request), {
    verdict: 'mismatch', detail: /^\/active_confirmation_poc_event: the answer has nothing, the proofs say/
  }, 'an event the node hid')
})

t.test('no verified header for V + 1: not-yet, before any node is asked', async (t) => {
  const before = honest.requests.length
  const proof = await proveRoute(route('/v1/models'), { params: {}, height: V }, async (key) => proveValue(client.fromNode(0), hashes, key, V + 1))
  t.same(proof, { kind: 'not-yet' })
  t.equal(honest.requests.length, before, 'nothing asked')
})
