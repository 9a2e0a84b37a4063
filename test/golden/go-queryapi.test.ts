import { createHash } from 'node:crypto'
import t, { type Test } from 'tap'
import { buildTestApp } from '../fixtures/app.js'
import {
  ACCOUNT_STUB, blsEpochStub, BRIDGE_STUB, DAPI_TOP_LEVEL_KEYS, EPOCH_INFO_STUB, EPOCH_PARTICIPANTS_GOLDEN, EPOCH_PARTICIPANTS_STUB,
  NODE_INFO_STUB, PENDING_SIGNING_STUB, PRICING_STUB, RESTRICTIONS_STUB
} from '../fixtures/golden/go-queryapi.js'

// One test per route, built from the Go edge-api's own tests (zpoken/gonka
// common/queryapi/tests, @ef1a5efd where that commit has them, else @89ff8bdb): their golden
// file, their "must be" assertions and their key sets, run against edge-api over the chain
// simulator answering the Go tests' stubs (test/fixtures/golden/go-queryapi.ts).

const INFERENCE = '/productscience/inference/inference'
const BLS = '/productscience/inference/bls'
const { app, sim } = await buildTestApp(t)
t.beforeEach(async () => {
  sim.clearFaults()
})

const sortedKeys = (body: object): string[] => Object.keys(body).sort()
function assertDapiKeys (t: Test, route: string, body: object): void {
  for (const key of DAPI_TOP_LEVEL_KEYS[route] ?? []) t.ok(key in body, `${route} carries the dapi contract key ${key}`)
}

t.test('GET /v1/epochs/{epoch}/participants equals the Go golden file (TestEpochParticipantsJSONMatchesDapiGolden)', async (t) => {
  sim.override('/cosmos/base/tendermint/v1beta1/abci_query', EPOCH_PARTICIPANTS_STUB.abciQuery)
  sim.override('/cosmos/base/tendermint/v1beta1/blocks/101', EPOCH_PARTICIPANTS_STUB.block101)
  sim.override('/cosmos/base/tendermint/v1beta1/validatorsets/100', EPOCH_PARTICIPANTS_STUB.noValidators)
  sim.override(`${INFERENCE}/excluded_participants/1`, EPOCH_PARTICIPANTS_STUB.noExclusions)
  const res = await app.inject('/v1/epochs/1/participants')
  t.equal(res.statusCode, 200)
  const got = res.json()
  t.same(sortedKeys(got), sortedKeys(EPOCH_PARTICIPANTS_GOLDEN), 'goldenKeys(golden) == goldenKeys(got)')
  // One deliberate difference (docs/clients.md): the participants list is [] where Go leaves it out.
  const golden = { ...EPOCH_PARTICIPANTS_GOLDEN, active_participants: { participants: [], ...EPOCH_PARTICIPANTS_GOLDEN.active_participants } }
  t.same(got, golden, 'the whole body equals the golden file, but for participants: []')
  assertDapiKeys(t, '/v1/epochs/{epoch}/participants', got)
  t.not(got.active_participants_bytes, '', 'proof-bearing contract: bytes present')
  t.ok(got.proof_ops, 'proof_ops present')
  t.equal(got.active_participants.created_at_block_height, 100, 'int64 fields must stay JSON numbers')
  t.equal(got.active_participants.epoch_group_id, 1)
  t.equal(got.block.header.height, 101, 'block height must be a JSON number')
  t.match(got.block.header.app_hash, /^[0-9A-F]+$/, 'app_hash must be hex-uppercase (comet HexBytes)')
})

t.test('GET /v1/epochs/{epoch}/participants validators (TestEpochParticipantsJSONEncodesValidatorsWithPubKeyAny)', async (t) => {
  sim.override('/cosmos/base/tendermint/v1beta1/abci_query', EPOCH_PARTICIPANTS_STUB.abciQuery)
  sim.override('/cosmos/base/tendermint/v1beta1/validatorsets/100', EPOCH_PARTICIPANTS_STUB.oneValidator)
  const got = (await app.inject('/v1/epochs/1/participants')).json()
  t.equal(got.validators.length, 1)
  const [validator] = got.validators
  const key = EPOCH_PARTICIPANTS_STUB.oneValidator.validators[0]?.pub_key.key as string
  t.equal(validator.pub_key, key, 'pub_key must be a base64 string')
  t.notMatch(validator.pub_key, /@type/)
  t.match(validator.address, /^[0-9A-F]+$/, 'validator address must be hex-uppercase')
  t.equal(validator.address, createHash('sha256').update(Buffer.from(key, 'base64')).digest('hex').slice(0, 40).toUpperCase())
  t.equal(validator.voting_power, 100, 'voting_power must be a JSON number')
})

t.test('GET /v1/epochs/latest (epoch_test.go)', async (t) => {
  sim.override(`${INFERENCE}/epoch_info`, EPOCH_INFO_STUB)
  const res = await app.inject('/v1/epochs/latest')
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.ok('block_height' in body && 'index' in body.latest_epoch, 'TestGetEpoch_Returns200')
  t.equal(body.epoch_params.epoch_length, 50, 'epoch_length must be a JSON number')
  t.notOk('epoch_params' in body.epoch_params, 'must encode EpochParams only, not full Params')
  t.notOk('active_confirmation_poc_event' in body, 'omitted (not null) when there is no active event')
  t.equal((await app.inject('/v1/epochs/5')).statusCode, 400, 'TestGetEpoch_Returns400OnNonLatest')
})

t.test('GET /v1/bls/epoch/{id} and /v1/bls/epochs/{id} (bls_test.go)', async (t) => {
  sim.override(`${BLS}/epoch_data/7`, blsEpochStub('7'))
  const body = (await app.inject('/v1/bls/epoch/7')).json()
  t.equal(body.epoch_data.epoch_id, 7, 'epoch_id must be a JSON number')
  // Go: "dkg_phase must be an enum name". A deliberate difference (docs/clients.md): the
  // number, as the deployed wire sends it and testermint reads it.
  t.equal(body.epoch_data.dkg_phase, 3, 'DKG_PHASE_COMPLETED as its number')
  t.same(body.epoch_data.participants, [], 'every field present, an empty list as []')
  sim.override(`${BLS}/epoch_data/2`, blsEpochStub('2'))
  const alias = await app.inject('/v1/bls/epochs/2')
  t.equal(alias.statusCode, 200)
  t.ok('epoch_data' in alias.json(), 'TestGetBLSEpochs_Returns200')
  sim.fail(`${BLS}/epoch_data`, 13, 'chain unavailable')
  t.equal((await app.inject('/v1/bls/epoch/1')).statusCode, 500, 'TestGetBLSEpoch_Returns500OnGRPCError')
})

t.test('GET /v1/bls/signatures/{request_id} (bls_test.go)', async (t) => {
  const id = '3q2-7w==' // deadbeef as the padded base64url path segment edge-api sends
  sim.override(`${BLS}/signing_status/${id}`, PENDING_SIGNING_STUB)
  const pending = await app.inject('/v1/bls/signatures/deadbeef')
  t.equal(pending.statusCode, 200)
  // Go: "status must be an enum name". A deliberate difference (docs/clients.md): testermint
  // parses it with status.toString().toInt().
  t.equal(pending.json().signing_request.status, 1, 'THRESHOLD_SIGNING_STATUS_PENDING_SIGNING as its number')
  sim.clearFaults()
  sim.fail(`${BLS}/signing_status`, 5, 'signing request not found')
  const missing = await app.inject('/v1/bls/signatures/deadbeef')
  t.equal(missing.statusCode, 200)
  t.same(missing.json(), { signing_request: null }, 'TestGetBLSSignature_Returns200WithNilOnNotFound')
  sim.clearFaults()
  sim.fail(`${BLS}/signing_status`, 13, 'backend failure')
  t.equal((await app.inject('/v1/bls/signatures/deadbeef')).statusCode, 500, 'TestGetBLSSignature_Returns500OnGRPCError')
  t.equal((await app.inject('/v1/bls/signatures/not-hex')).statusCode, 400, 'TestGetBLSSignature_Returns400OnInvalidHex')
})

t.test('GET /v1/status and /v1/versions (status_test.go)', async (t) => {
  const status = await app.inject('/v1/status')
  t.equal(status.statusCode, 200)
  t.match(status.body, /"ok"/)
  assertDapiKeys(t, '/v1/status', status.json())
  sim.override('/cosmos/base/tendermint/v1beta1/node_info', NODE_INFO_STUB)
  const versions = await app.inject('/v1/versions')
  t.equal(versions.statusCode, 200)
  for (const text of ['"testapp"', '"1.2.3"', '"abc123"', '"api_version"', '"node_version"', '"timestamp"']) t.match(versions.body, text)
  assertDapiKeys(t, '/v1/versions', versions.json())
  sim.clearFaults()
  sim.fail('/cosmos/base/tendermint/v1beta1/node_info', 14, 'node down')
  const failed = await app.inject('/v1/versions')
  t.equal(failed.statusCode, 500)
  t.match(failed.body, /"error"/, 'TestGetVersions_Returns500OnGRPCError')
})

t.test('GET /v1/models, /v1/governance/models, /v1/governance/models-legacy, /v1/pricing (models_test.go)', async (t) => {
  const models = await app.inject('/v1/models')
  t.match(models.body, /"object":"list"/)
  assertDapiKeys(t, '/v1/models', models.json())
  assertDapiKeys(t, '/v1/governance/models', (await app.inject('/v1/governance/models')).json())
  assertDapiKeys(t, '/v1/governance/models-legacy', (await app.inject('/v1/governance/models-legacy')).json())

  sim.override(`${INFERENCE}/current_epoch_group_data`, PRICING_STUB.current)
  sim.override(`${INFERENCE}/epoch_group_data/1`, PRICING_STUB.subGroup)
  const pricing = (await app.inject('/v1/pricing')).json()
  assertDapiKeys(t, '/v1/pricing', pricing)
  t.equal(pricing.unit_of_compute_price, 5)
  t.equal(pricing.models.length, 1)
  t.equal(pricing.models[0].id, 'priced-model')
  t.equal(pricing.models[0].price_per_token, 50, 'units_of_compute_per_token * unit_of_compute_price = 10 * 5')

  sim.override(`${INFERENCE}/current_epoch_group_data`, { epoch_group_data: { epoch_index: '1' } })
  const empty = (await app.inject('/v1/models')).json()
  t.equal(empty.object, 'list')
  t.same(empty.data, [], 'TestGetModels_ReturnsEmptyListWhenNoSubgroupModels')
})

t.test('GET /v1/participants and /v1/participants/{address} (participants_test.go)', async (t) => {
  const list = await app.inject('/v1/participants')
  t.equal(list.statusCode, 200)
  t.ok(list.json().participants.length > 0)
  sim.override(`${INFERENCE}/inference_participant/gonka1abc`, ACCOUNT_STUB)
  const one = await app.inject('/v1/participants/gonka1abc')
  t.equal(one.statusCode, 200)
  t.match(one.body, 'pubkey123')
  t.match(one.body, 'ngonka')
  sim.fail(`${INFERENCE}/inference_participant`, 5, 'account not found')
  t.equal((await app.inject('/v1/participants/gonka1unknown')).statusCode, 404, 'TestGetParticipant_Returns404WhenNotFound')
})

t.test('GET /v1/poc-batches/{epoch} (poc_test.go)', async (t) => {
  sim.override(`${INFERENCE}/poc_batches_for_stage/42`, { poc_batch: [{}] })
  sim.override(`${INFERENCE}/poc_batches_for_stage/99`, {})
  t.equal((await app.inject('/v1/poc-batches/42')).statusCode, 200, 'TestGetPoCBatches_Returns200WhenFound')
  t.equal((await app.inject('/v1/poc-batches/99')).statusCode, 404, 'TestGetPoCBatches_Returns404WhenEmpty')
})

t.test('GET /v1/restrictions/* (restrictions_test.go)', async (t) => {
  sim.override('/productscience/inference/restrictions/status', RESTRICTIONS_STUB.status)
  sim.override('/productscience/inference/restrictions/exemptions', RESTRICTIONS_STUB.exemptions)
  sim.override('/productscience/inference/restrictions/exemption_usage', RESTRICTIONS_STUB.usage)
  const status = await app.inject('/v1/restrictions/status')
  t.equal(status.statusCode, 200)
  t.match(status.body, '"is_active"')
  t.equal((await app.inject('/v1/restrictions/exemptions')).statusCode, 200)
  t.equal((await app.inject('/v1/restrictions/exemptions/ex1/usage/addr1')).statusCode, 200)
  sim.clearFaults()
  sim.fail('/productscience/inference/restrictions/exemption_usage', 5, 'exemption not found')
  t.equal((await app.inject('/v1/restrictions/exemptions/ex1/usage/addr1')).statusCode, 404, 'TestGetRestrictionsExemptionUsage_Returns404OnNotFound')
})

t.test('GET /v1/bridge/addresses (bridge_test.go)', async (t) => {
  sim.override(`${INFERENCE}/bridge_addresses/ethereum`, BRIDGE_STUB)
  sim.override(`${INFERENCE}/bridge_addresses/unknown`, {})
  const found = await app.inject('/v1/bridge/addresses?chain=ethereum')
  t.equal(found.statusCode, 200)
  for (const text of ['0xdeadbeef', '0xcafebabe', '"chain_name":"ethereum"']) t.match(found.body, text)
  // Go answers null here; a deliberate difference (docs/clients.md): lists are always arrays.
  t.match((await app.inject('/v1/bridge/addresses?chain=unknown')).body, '"addresses":[]')
  sim.clearFaults()
  sim.fail(`${INFERENCE}/bridge_addresses`, 5, 'chain not found')
  t.equal((await app.inject('/v1/bridge/addresses?chain=unknown')).statusCode, 500, 'TestGetBridgeAddresses_Returns500OnGRPCError')
})
