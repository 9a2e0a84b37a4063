import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'
import { createHash } from 'node:crypto'
import { blockAt, PROPOSER, SIGNER, VALIDATORS } from '../../../harness/chain-simulator/data/node.js'
import {
  ACTIVE_PARTICIPANTS, CORRUPT_EPOCH, CREATED_AT, CURRENT_EPOCH, encodeActiveParticipants, EXTREME_EPOCH, GENESIS_EPOCH, PRUNED_EPOCH, storeKey
} from '../../../harness/chain-simulator/data/epochs.js'

const ABCI = '/cosmos/base/tendermint/v1beta1/abci_query'
const BLOCKS = '/cosmos/base/tendermint/v1beta1/blocks/'
const VALIDATOR_SETS = '/cosmos/base/tendermint/v1beta1/validatorsets/'
const EXCLUDED = '/productscience/inference/inference/excluded_participants/'
const CURRENT = '/productscience/inference/inference/get_current_epoch'
// The Go service's golden file (dapi_epoch_participants_golden.json): its top-level keys, in order.
const GOLDEN_KEYS = ['active_participants', 'addresses', 'active_participants_bytes', 'proof_ops', 'validators', 'block', 'excluded_participants']
const PARTICIPANTS_KEYS = ['participants', 'epoch_group_id', 'poc_start_block_height', 'effective_block_height', 'created_at_block_height', 'epoch_id']
const keyParam = (epoch: number): string => encodeURIComponent(storeKey(BigInt(epoch)).toString('base64'))
const hexOf = (text: string): string => createHash('sha256').update(text).digest('hex').toUpperCase()

// One app and simulator for the whole file (building an app compiles every route's schemas,
// slow on a loaded machine); each test starts with no faults, overrides or counts.
const { app, sim, logs } = await buildTestApp(t)
t.beforeEach(async () => {
  sim.clearFaults()
  sim.resetCounts()
})

t.test('GET /v1/epochs/42/participants: decoded participants, proof, block, validators, exclusions', async (t) => {
  const res = await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(Object.keys(body), GOLDEN_KEYS, 'the golden key set, in Go\'s order')
  t.same(Object.keys(body.active_participants), PARTICIPANTS_KEYS, 'every ActiveParticipants field')
  t.equal(body.active_participants.created_at_block_height, CREATED_AT)
  t.equal(body.active_participants.epoch_group_id, 42)
  t.equal(body.active_participants.participants.length, 3)
  t.same(body.active_participants.participants[2], {
    index: 'gonka1v5s4yvc7z3mfd8k9sxq0e7f6p2n3jj8hdl4c2r',
    validator_key: 'not-a-base64-key!',
    weight: 410,
    inference_url: 'http://203.0.113.17:8000',
    models: [],
    ml_nodes: [],
    voting_powers: [{ model_id: 'Qwen/Qwen3-32B', voting_power: 1250 }]
  }, 'encoding/json of the gogoproto struct (omitempty: the nil seed left out), but models and ml_nodes always arrays (docs/clients.md)')
  t.same(body.active_participants.participants[0].ml_nodes[1], {
    ml_nodes: [{ node_id: 'node-b', throughput: 3000, poc_weight: 550, timeslot_allocation: [true, true] }]
  })
  t.same(body.addresses, [
    // HEX-UPPER(SHA256(key)[:20]) of the fixture's keys; the third is not base64.
    'E94C3E772C5D86181B79D83776A55D731883A5AA',
    '8DF7707C001D7A228BBC145A7A44A16B78BBC692',
    ''
  ])
  t.equal(body.active_participants_bytes, Buffer.from(encodeActiveParticipants(ACTIVE_PARTICIPANTS)).toString('hex'), 'the store value, lower-case hex')
  t.same(body.proof_ops.ops.map((op: { type: string }) => op.type), ['ics23:iavl', 'ics23:simple'])
  t.equal(body.proof_ops.ops[0].key, storeKey(BigInt(CURRENT_EPOCH)).toString('base64'))
  t.same(body.block, {
    header: {
      version: { block: 11 },
      chain_id: 'gonka-mainnet',
      height: CREATED_AT + 1,
      time: '2026-01-15T10:00:00.12Z',
      last_block_id: { hash: hexOf(`block-${CREATED_AT}`), parts: { total: 1, hash: hexOf('parts') } },
      last_commit_hash: hexOf('last-commit'),
      data_hash: hexOf('data'),
      validators_hash: hexOf('validators'),
      next_validators_hash: hexOf('validators'),
      consensus_hash: hexOf('consensus'),
      // The simulator's app hash is the root of its store after the previous block, so proofs verify.
      app_hash: Buffer.from((blockAt(CREATED_AT + 1) as { block: { header: { app_hash: string } } }).block.header.app_hash, 'base64').toString('hex').toUpperCase(),
      last_results_hash: '',
      evidence_hash: hexOf('evidence'),
      proposer_address: PROPOSER.toString('hex').toUpperCase()
    },
    data: { txs: [Buffer.from('tx-1').toString('base64')] },
    evidence: { evidence: [] },
    last_commit: {
      height: CREATED_AT,
      round: 0,
      block_id: { hash: hexOf(`block-${CREATED_AT}`), parts: { total: 1, hash: hexOf('parts') } },
      signatures: [
        { block_id_flag: 2, validator_address: SIGNER.toString('hex').toUpperCase(), timestamp: '2026-01-15T09:59:54.987654321Z', signature: Buffer.alloc(64, 7).toString('base64') },
        { block_id_flag: 1, validator_address: '', timestamp: '0001-01-01T00:00:00Z', signature: null }
      ]
    }
  }, 'block (not sdk_block) of height + 1 as CometBFT types.Block through Go\'s encoding/json')
  t.match(res.body, /"block":\{"header":\{"version":\{"block":11\},"chain_id":"gonka-mainnet","height":1842006,"time":/, 'CometBFT\'s field order')
  t.same(body.validators[0], {
    address: 'E94C3E772C5D86181B79D83776A55D731883A5AA',
    pub_key: VALIDATORS[0]?.key,
    voting_power: 1250,
    proposer_priority: -7
  })
  t.match(res.body, /"voting_power":9223372036854775807,"proposer_priority":-9223372036854775808\}/)
  t.same(body.excluded_participants[0], { address: 'gonka1d8k3w0f5s7pqx2n4m6c9v1z0yl7tj3ghe5aru8', reason: 'failed_confirmation_poc', exclusion_block_height: 1843120 })
  t.match(res.body, /"exclusion_block_height":9223372036854775807\}/)

  const key = keyParam(CURRENT_EPOCH)
  t.same(sim.requests, [
    `${ABCI}?path=store%2Finference%2Fkey&data=${key}`,
    `${ABCI}?path=store%2Finference%2Fkey&data=${key}&height=${CREATED_AT}&prove=true`,
    `${BLOCKS}${CREATED_AT + 1}`,
    `${VALIDATOR_SETS}${CREATED_AT}`,
    `${EXCLUDED}${CURRENT_EPOCH}`
  ], 'the Go service\'s chain calls, in its order')
})

t.test('"current" asks the chain for the epoch first', async (t) => {
  const res = await app.inject('/v1/epochs/current/participants')
  t.equal(res.statusCode, 200)
  t.equal(res.json().active_participants.epoch_id, CURRENT_EPOCH)
  t.equal(sim.requests[0], CURRENT)
  t.equal(sim.count(ABCI), 2)
  t.equal(sim.requests.at(-1), `${EXCLUDED}${CURRENT_EPOCH}`)
})

t.test('created at height 0: no proof query, no block, no validator set', async (t) => {
  const res = await app.inject(`/v1/epochs/${GENESIS_EPOCH}/participants`)
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(Object.keys(body), ['active_participants', 'addresses', 'active_participants_bytes', 'validators', 'excluded_participants'])
  t.same(body.validators, [])
  t.same(body.excluded_participants, [])
  t.not(body.active_participants_bytes, '')
  t.notOk('created_at_block_height' in body.active_participants, 'zero: left out (omitempty)')
  t.same(sim.requests, [`${ABCI}?path=store%2Finference%2Fkey&data=${keyParam(GENESIS_EPOCH)}`, `${EXCLUDED}${GENESIS_EPOCH}`])
  t.equal(sim.count(BLOCKS), 0)
  t.equal(sim.count(VALIDATOR_SETS), 0)
})

t.test('an epoch without participants: participants is [], not left out (docs/clients.md)', async (t) => {
  const empty = { ...ACTIVE_PARTICIPANTS, participants: [], created_at_block_height: 0n }
  sim.override(ABCI, { code: 0, value: Buffer.from(encodeActiveParticipants(empty)).toString('base64') })
  const res = await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.equal(res.statusCode, 200)
  t.same(res.json().active_participants, { participants: [], epoch_group_id: 42, poc_start_block_height: 1842000, effective_block_height: CREATED_AT, epoch_id: CURRENT_EPOCH })
  t.same(res.json().addresses, [])
})

t.test('64-bit values survive exactly: uint64 max epoch_id, int64 max heights', async (t) => {
  const res = await app.inject(`/v1/epochs/${EXTREME_EPOCH}/participants`)
  t.equal(res.statusCode, 200)
  t.match(res.body, /"epoch_group_id":18446744073709551615,"poc_start_block_height":-9223372036854775808,"effective_block_height":9223372036854775807,"created_at_block_height":9223372036854775807,"epoch_id":18446744073709551615\}/)
  t.match(res.body, /"weight":9223372036854775807,/)
  t.match(res.body, /"seed":\{"participant":"gonka1extreme","epoch_index":18446744073709551615\}/, 'the empty signature left out')
  t.match(res.body, /"throughput":-9223372036854775808,"poc_weight":9223372036854775807\}/)
  t.ok(sim.requests.includes(`${VALIDATOR_SETS}9223372036854775807`))
  t.ok(sim.requests.includes(`${BLOCKS}9223372036854775808`))
  t.notOk('block' in res.json(), 'a block beyond the chain is left out')
})

t.test('the largest epoch number is queried exactly', async (t) => {
  const res = await app.inject('/v1/epochs/18446744073709551615/participants')
  t.equal(res.statusCode, 404)
  t.same(res.json(), { message: 'active participants not found for epoch' })
  t.equal(sim.requests[0], `${ABCI}?path=store%2Finference%2Fkey&data=${encodeURIComponent(storeKey(18446744073709551615n).toString('base64'))}`)
})

t.test('no store entry (or an ABCI error code) is 404', async (t) => {
  const res = await app.inject('/v1/epochs/5/participants')
  t.equal(res.statusCode, 404)
  t.same(res.json(), { message: 'active participants not found for epoch' })
  t.equal(sim.count(), 1, 'nothing after the first query')

  sim.override(ABCI, { code: 38, log: 'failed', value: 'CgA=' })
  const failed = await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.equal(failed.statusCode, 404)
  t.same(failed.json(), { message: 'active participants not found for epoch' })

  sim.override(ABCI, { code: 0 })
  t.equal((await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)).statusCode, 404, 'no value at all')
})

t.test('the proven query finding nothing at the creation height is 404 too', async (t) => {
  const res = await app.inject(`/v1/epochs/${PRUNED_EPOCH}/participants`)
  t.equal(res.statusCode, 404)
  t.same(res.json(), { message: 'active participants not found for epoch' })
  t.equal(sim.count(ABCI), 2)
  t.equal(sim.count(BLOCKS), 0)
})

t.test('an ABCI answer without proof_ops leaves the key out', async (t) => {
  const stored = Buffer.from(encodeActiveParticipants(ACTIVE_PARTICIPANTS)).toString('base64')
  // No code either: protojson leaves nothing out, but a missing code is 0 all the same.
  sim.override(ABCI, { value: stored })
  const res = await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.equal(res.statusCode, 200)
  t.notOk('proof_ops' in res.json())
  t.equal(res.json().active_participants_bytes, Buffer.from(stored, 'base64').toString('hex'))
})

t.test('a store value that is not an ActiveParticipants is a bare 500', async (t) => {
  const res = await app.inject(`/v1/epochs/${CORRUPT_EPOCH}/participants`)
  t.equal(res.statusCode, 500)
  t.same(res.json(), { message: 'Internal Server Error' })
  t.ok(logs.some((l) => l.level === 50 && JSON.stringify(l).includes('wrong wire type')), 'the detail is in the log')
})

t.test('the block after the entry is optional: any failure leaves it out', async (t) => {
  sim.fail(BLOCKS, 14, 'node is catching up')
  const res = await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.json()), GOLDEN_KEYS.filter((k) => k !== 'block'))
  t.ok(logs.some((l) => l.msg === 'block after the active participants is not available'))

  sim.clearFaults()
  sim.override(`${BLOCKS}${CREATED_AT + 1}`, { block_id: {}, block: null, sdk_block: { header: { height: String(CREATED_AT + 1) } } })
  t.notOk('block' in (await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)).json(), 'only sdk_block: Go converts block, so none')

  sim.override(`${BLOCKS}${CREATED_AT + 1}`, { block_id: {}, block: { header: { version: { block: '11' }, height: '5', proposer_address: 'AAAA' } } })
  const refused = await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.equal(refused.statusCode, 200)
  t.notOk('block' in refused.json(), 'a block comettypes.BlockFromProto refuses is left out, as in Go')
  t.ok(logs.some((l) => l.msg === 'block after the active participants is not a valid CometBFT block; left out'))
})

t.test('proof ops are cometbft crypto.ProofOps through encoding/json: empty fields left out', async (t) => {
  const stored = Buffer.from(encodeActiveParticipants(ACTIVE_PARTICIPANTS)).toString('base64')
  sim.override(ABCI, { code: 0, value: stored, proof_ops: { ops: [{ type: 'ics23:iavl', key: '', data: 'ZGF0YQ==' }, { type: '', key: null }] } })
  const res = await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.same(res.json().proof_ops, { ops: [{ type: 'ics23:iavl', data: 'ZGF0YQ==' }, {}] })
  sim.override(ABCI, { code: 0, value: stored, proof_ops: { ops: [] } })
  t.same((await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)).json().proof_ops, { ops: null }, 'a nil ops slice is null')
})

t.test('a validator set error is mapped; a sparse set still answers', async (t) => {
  sim.fail(VALIDATOR_SETS, 3, 'height is not available')
  const res = await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.equal(res.statusCode, 400)
  t.same(res.json(), { message: 'height is not available' })
  t.equal(sim.count(EXCLUDED), 0, 'nothing after a fatal step')

  sim.clearFaults()
  sim.override(`${VALIDATOR_SETS}${CREATED_AT}`, { validators: [{ pub_key: null }, { pub_key: { key: 'not base64' }, voting_power: '5' }] })
  const sparse = await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.same(sparse.json().validators, [
    { address: '', pub_key: '', voting_power: 0, proposer_priority: 0 },
    { address: '', pub_key: 'not base64', voting_power: 5, proposer_priority: 0 }
  ])
  sim.override(`${VALIDATOR_SETS}${CREATED_AT}`, {})
  t.same((await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)).json().validators, [])
})

t.test('excluded participants: errors and gaps answer [] (logged)', async (t) => {
  sim.fail(EXCLUDED, 13, 'store corrupted')
  const res = await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.equal(res.statusCode, 200)
  t.same(res.json().excluded_participants, [])
  t.ok(logs.some((l) => l.msg === 'excluded participants query failed; answering none'))

  sim.clearFaults()
  sim.override(`${EXCLUDED}${CURRENT_EPOCH}`, { items: [{}] })
  t.same((await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)).json().excluded_participants, [
    { address: '', reason: '', exclusion_block_height: 0 }
  ])
  sim.override(`${EXCLUDED}${CURRENT_EPOCH}`, {})
  t.same((await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)).json().excluded_participants, [])
})

t.test('chain errors of the store query are mapped; transport failures are 503/504', async (t) => {
  // The chain's own answers are read with the default timeout: under load a 100 ms one turned
  // the 404 below into a 504 (issue 54). Only the hang is read with 100 ms, by an app of its own.
  const { app } = await buildTestApp(t, { sim })
  const { app: impatient } = await buildTestApp(t, { sim, env: { EDGE_API_CHAIN_TIMEOUT: '100ms' } })
  sim.fail(ABCI, 14, 'abci unavailable')
  let res = await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.equal(res.statusCode, 503)
  t.same(res.json(), { message: 'abci unavailable' })

  sim.clearFaults()
  sim.fail(CURRENT, 5, 'no current epoch')
  res = await app.inject('/v1/epochs/current/participants')
  t.equal(res.statusCode, 404)
  t.same(res.json(), { message: 'no current epoch' })

  sim.clearFaults()
  sim.hang(ABCI)
  res = await impatient.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.equal(res.statusCode, 504)
  t.same(res.json(), { message: 'chain query timed out' })

  sim.clearFaults()
  await sim.refuse()
  t.teardown(() => sim.restore())
  res = await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)
  t.equal(res.statusCode, 503)
  t.same(res.json(), { message: 'chain unavailable' })
})

t.test('bad epochs are 400 with the Go messages, before any chain request', async (t) => {
  const cases: Array<[string, string]> = [
    ['0', 'Epoch enumeration starts with 1'],
    ['000', 'Epoch enumeration starts with 1'],
    ['latest', 'Invalid epoch id'],
    ['abc', 'Invalid epoch id'],
    ['-1', 'Invalid epoch id'],
    ['1.5', 'Invalid epoch id'],
    ['+1', 'Invalid epoch id'],
    ['%20', 'Invalid epoch id'],
    ['0x10', 'Invalid epoch id'],
    ['CURRENT', 'Invalid epoch id'],
    ['18446744073709551616', 'Invalid epoch id'],
    ['99999999999999999999', 'Invalid epoch id'],
    ['1'.repeat(65), 'Invalid epoch id'],
    ['1%2F..%2F..%2Fnode_info', 'Invalid epoch id']
  ]
  for (const [epoch, message] of cases) {
    const res = await app.inject(`/v1/epochs/${epoch}/participants`)
    t.equal(res.statusCode, 400, epoch)
    t.same(res.json(), { message }, epoch)
  }
  t.equal(sim.count(), 0, 'no chain request made')
})

t.test('leading zeros name the same epoch, as Go\'s ParseUint reads them', async (t) => {
  const res = await app.inject('/v1/epochs/00042/participants')
  t.equal(res.statusCode, 200)
  t.equal(sim.requests[0], `${ABCI}?path=store%2Finference%2Fkey&data=${keyParam(CURRENT_EPOCH)}`)
  t.equal(sim.requests.at(-1), `${EXCLUDED}${CURRENT_EPOCH}`)
})
