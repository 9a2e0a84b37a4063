import type { AddressInfo } from 'node:net'
import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'
import { ALLOWED_KEY, COMPLETED_REQUEST_ID, EPOCHS, PENDING_REQUEST_ID, slotPublicKeys } from '../../../harness/chain-simulator/data/bls.js'
import { EPOCH_INFO, NEWER_CHAIN_RECIPE } from '../../../harness/chain-simulator/data/epochs.js'
import { MAX_SHARED_BYTES } from '../../../src/shared/shared-answers.js'

// Issue 43's six rows over a real socket, against the chain simulator's v0.2.14 data: each
// field as the Go service writes it (encoding/json with omitempty for epoch_params, protojson
// with defaults for the BLS messages), matched in the bytes sent, not only in parsed JSON.

const { app, sim } = await buildTestApp(t)
await app.listen({ host: '127.0.0.1', port: 0 })
const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

async function get (path: string): Promise<string> {
  const res = await fetch(origin + path)
  t.equal(res.status, 200, path)
  return await res.text()
}

t.test('epoch_params.confirmation_poc_safety_window: a number, as encoding/json writes it', async (t) => {
  const body = await get('/v1/epochs/latest')
  t.match(body, /"poc_slot_allocation":\{"value":5,"exponent":-1\},"confirmation_poc_safety_window":500\}/)
  sim.override('/productscience/inference/inference/epoch_info', { ...EPOCH_INFO, params: { epoch_params: { ...EPOCH_INFO.params.epoch_params, confirmation_poc_safety_window: '0' } } })
  t.notMatch(await get('/v1/epochs/latest'), 'confirmation_poc_safety_window', 'zero is left out (omitempty), as before v0.2.12 set it')
  sim.clearFaults()
})

t.test('active_confirmation_poc_event.recipe: no key from a v0.2.14 chain, the chain\'s value where it sends one', async (t) => {
  const body = await get('/v1/epochs/latest')
  t.match(body, /"poc_seed_block_hash":"9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"\}/, 'the event ends without a recipe')
  t.notMatch(body, 'recipe')
  const event = { ...EPOCH_INFO.active_confirmation_poc_event, recipe: NEWER_CHAIN_RECIPE }
  sim.override('/productscience/inference/inference/epoch_info', { ...EPOCH_INFO, active_confirmation_poc_event: event })
  t.match(await get('/v1/epochs/latest'), /"recipe":\{"stage_height":1843110,/)
  sim.clearFaults()
})

t.test('BLS epoch data: slot_public_keys, allowed_secp256k1_public_keys and the complaints\' responses', async (t) => {
  const body = await get('/v1/bls/epoch/7')
  t.match(body, `"slot_public_keys":${JSON.stringify(slotPublicKeys(100))}}`, 'every slot\'s key as base64, in slot order')
  t.match(body, `"slot_end_index":62,"allowed_secp256k1_public_keys":["${ALLOWED_KEY}"]}`)
  t.match(body, '"slot_end_index":99,"allowed_secp256k1_public_keys":[]}', 'an empty list, not null or no key')
  t.match(body, '"disputed_ciphertext_index":2,"response_submitted":true,"response_share_bytes":"c2hhcmUtNjM=","response_opening_material":"b3BlbmluZy02Mw=="}')
  t.match(body, '"disputed_ciphertext_index":0,"response_submitted":false,"response_share_bytes":null,"response_opening_material":null}',
    'a complaint not answered yet: false, null, null')
  t.match(await get('/v1/bls/epochs/9'), '"validation_signature":null,"slot_public_keys":[]}', 'an epoch still dealing: []')
})

t.test('signing_request.attempt: a number', async (t) => {
  t.match(await get(`/v1/bls/signatures/${COMPLETED_REQUEST_ID}`), '"deadline_block_height":1843300,"attempt":1}')
  t.match(await get(`/v1/bls/signatures/${PENDING_REQUEST_ID}`), '"deadline_block_height":0,"attempt":2}')
})

t.test('slot_public_keys at production size stays within the byte budgets', async (t) => {
  // The chain's defaults give 100 slots "for PoC (smaller than production 1000)"
  // (x/bls/types/params.go); 4096 is the most a DKG round allows (MaxDealerPartCommitmentsCount).
  const epoch = EPOCHS[7] as { epoch_data: Record<string, unknown> }
  for (const slots of [1000, 4096]) {
    sim.override('/productscience/inference/bls/epoch_data/7', { epoch_data: { ...epoch.epoch_data, i_total_slots: slots, slot_public_keys: slotPublicKeys(slots) } })
    const bytes = Buffer.byteLength(await get('/v1/bls/epoch/7'))
    const keys = Buffer.byteLength(JSON.stringify(slotPublicKeys(slots)))
    t.equal(keys, slots * 131 + 1, `${slots} keys: 128 base64 characters, quotes and a comma each`)
    t.ok(bytes < MAX_SHARED_BYTES, `${slots} slots: the answer (${bytes} bytes, ${keys} of them the keys) fits the shared tier's ${MAX_SHARED_BYTES}`)
    t.comment(`slot_public_keys × ${slots}: the answer is ${bytes} bytes, ${keys} of them the keys`)
  }
  sim.clearFaults()
})
