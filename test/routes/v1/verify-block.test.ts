import { readFileSync } from 'node:fs'
import t from 'tap'
import { VERIFY_BLOCK_BODY_LIMIT } from '../../../src/routes/v1/verify-block.js'
import { buildTestApp } from '../../fixtures/app.js'
import { HUNDRED_COMMIT_BLOCK, SIGNED_BASE, setAt, simValidator } from '../../../harness/chain-simulator/data/commits.js'
import { INVALID_COMMIT, SETS, flipBase64, gatewayBlock, validatorsAt } from '../../fixtures/verify/route-bodies.js'

// Every verification runs in the worker thread, which starts under the test runner's loader:
// on a loaded machine this file takes longer than tap's default 30 s.
t.setTimeout(180_000)

const { app, sim } = await buildTestApp(t, { env: { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' } })
t.beforeEach(async () => {
  sim.clearFaults()
  sim.resetCounts()
})

t.test('POST /v1/verify-block: the gateway\'s block, checked against the chain\'s set and then the supplied one', async (t) => {
  const height = HUNDRED_COMMIT_BLOCK
  const block = gatewayBlock(height).sdk_block
  const validators = validatorsAt(height - 1).reverse() // any order
  const res = await app.inject({ method: 'POST', url: '/v1/verify-block', payload: { block, validators } })
  t.equal(res.statusCode, 200)
  t.equal(res.body, '', 'an empty body, as Go\'s NoContent(200)')
  t.same(sim.requests, [`${SETS}${height - 1}?pagination.offset=0&pagination.limit=100`])

  const sigs = block.last_commit.signatures
  const tampered = { ...block, last_commit: { ...block.last_commit, signatures: sigs.map((s, i) => i === 42 ? { ...s, signature: flipBase64(s.signature as string, 0) } : s) } }
  const bad = await app.inject({ method: 'POST', url: '/v1/verify-block', payload: { block: tampered, validators } })
  t.equal(bad.statusCode, 400)
  t.same(bad.json(), { message: `ground truth block verification failed: ${INVALID_COMMIT}` })

  const stranger = simValidator('stranger', 10n)
  const wrongSet = [...validators.slice(1), { pub_key: stranger.pubKey.toString('base64'), voting_power: 10 }]
  const wrong = await app.inject({ method: 'POST', url: '/v1/verify-block', payload: { block, validators: wrongSet } })
  t.equal(wrong.statusCode, 400)
  t.same(wrong.json(), { message: `block signature verification failed: ${INVALID_COMMIT}` })
})

t.test('the round trip from /v1/epochs/{epoch}/participants: its block and validators verify', async (t) => {
  // The signed stretch plays the epoch: its block is the one after the validators' height.
  const participants = { block: gatewayBlock(SIGNED_BASE + 2).sdk_block, validators: validatorsAt(SIGNED_BASE + 1) }
  const res = await app.inject({ method: 'POST', url: '/v1/verify-block', payload: participants })
  t.equal(res.statusCode, 200)
})

t.test('verify-block takes CometBFT\'s own JSON too: a real v0.38 block (tendermint-rs fixture)', async (t) => {
  const fixture = JSON.parse(readFileSync(new URL('../../fixtures/verify/tendermint-rs-kvstore-v0_38.json', import.meta.url), 'utf8')) as {
    genesis: { validators: Array<{ power: string, pub_key: { value: string } }> }, block_at_height_10: Record<string, unknown>
  }
  const genesis = fixture.genesis.validators[0] as { power: string, pub_key: { value: string } }
  sim.override(`${SETS}9`, { validators: [{ pub_key: { '@type': '/cosmos.crypto.ed25519.PubKey', key: genesis.pub_key.value }, voting_power: genesis.power }], pagination: { total: '1' } })
  const validators = [{ pub_key: genesis.pub_key.value, voting_power: Number(genesis.power) }]
  const res = await app.inject({ method: 'POST', url: '/v1/verify-block', payload: { block: fixture.block_at_height_10, validators } })
  t.equal(res.statusCode, 200)
  const commit = fixture.block_at_height_10.last_commit as { signatures: Array<{ timestamp: string }> }
  const later = { ...commit, signatures: [{ ...commit.signatures[0], timestamp: '2023-05-17T14:12:53.088875125Z' }] }
  const tampered = await app.inject({ method: 'POST', url: '/v1/verify-block', payload: { block: { ...fixture.block_at_height_10, last_commit: later }, validators } })
  t.equal(tampered.statusCode, 400, 'one nanosecond later')
  t.same(tampered.json(), { message: `ground truth block verification failed: ${INVALID_COMMIT}` })
})

t.test('verify-block: bad input is 400 saying what is wrong, before any chain request', async (t) => {
  const block = gatewayBlock(SIGNED_BASE + 2).sdk_block
  const validators = validatorsAt(SIGNED_BASE + 1)
  const cases: Array<[string | Record<string, unknown>, string]> = [
    [{ validators }, 'missing body field block'],
    [{ block }, 'missing body field validators'],
    [{ block: { header: block.header }, validators }, 'missing body field last_commit'],
    [{ block: { ...block, header: { ...block.header, chain_id: {} } }, validators }, 'invalid body field block/header/chain_id: must be string'],
    [{ block: { ...block, header: { ...block.header, height: 'ten' } }, validators }, 'invalid Block: header.height: must be a 64-bit integer (a JSON number or a decimal string)'],
    [{ block: { ...block, last_commit: { ...block.last_commit, signatures: [] } }, validators }, 'invalid Block: last_commit: no signatures in commit'],
    [{ block, validators: [{ pub_key: 'nope', voting_power: 1 }] }, 'Error decoding public key: validators[0].pub_key must be standard base64 of a 32-byte ed25519 key'],
    [{ block, validators: [{ pub_key: Buffer.alloc(33).toString('base64'), voting_power: 1 }] }, 'Error decoding public key: validators[0].pub_key must be standard base64 of a 32-byte ed25519 key'],
    [{ block, validators: [{ pub_key: validators[0]?.pub_key, voting_power: 0 }] }, "invalid body field validators/0/voting_power: an integer from 1 to 1152921504606846975 (CometBFT's MaxTotalVotingPower), a JSON number or a decimal string"],
    [{ block, validators: [validators[0], validators[0]] }, `invalid validators: duplicate entry ${setAt(SIGNED_BASE + 1)[0]?.address.toString('hex').toUpperCase() as string}`],
    ['{"block": ', "Expected property name or '}' in JSON at position 11"],
    ['', "Body cannot be empty when content-type is set to 'application/json'"]
  ]
  for (const [payload, message] of cases) {
    const res = await app.inject({ method: 'POST', url: '/v1/verify-block', payload, headers: { 'content-type': 'application/json' } })
    t.equal(res.statusCode, 400, message)
    t.match(res.json().message, message.startsWith('Expected') ? /JSON/ : message)
  }
  const none = await app.inject({ method: 'POST', url: '/v1/verify-block' })
  t.same([none.statusCode, none.json()], [400, { message: 'invalid body field body: must be object' }], 'no body at all')
  t.equal(sim.count(), 0, 'the chain was never asked')
})

t.test('verify-block takes a body as large as a block: parsed in the worker thread; over the limit is 413', async (t) => {
  t.equal(VERIFY_BLOCK_BODY_LIMIT, 32 * 1024 * 1024)
  const block = { ...gatewayBlock(HUNDRED_COMMIT_BLOCK).sdk_block, data: { txs: Array.from({ length: 200 }, (_, i) => Buffer.alloc(3000, i).toString('base64')) } }
  const payload = JSON.stringify({ block, validators: validatorsAt(HUNDRED_COMMIT_BLOCK - 1) })
  t.ok(payload.length > 600_000)
  const res = await app.inject({ method: 'POST', url: '/v1/verify-block', payload, headers: { 'content-type': 'application/json' } })
  t.equal(res.statusCode, 200)
  const tooLarge = await app.inject({ method: 'POST', url: '/v1/verify-block', payload: Buffer.alloc(VERIFY_BLOCK_BODY_LIMIT + 1, 0x20), headers: { 'content-type': 'application/json' } })
  t.equal(tooLarge.statusCode, 413)
  t.same(tooLarge.json(), { message: 'Request body is too large' })
})
