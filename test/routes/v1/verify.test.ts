import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { request } from 'undici'
import { VERIFY_BLOCK_BODY_LIMIT, VERIFY_CONCURRENCY, VERIFY_QUEUE_LIMIT } from '../../../src/routes/v1/verify.js'
import { buildTestApp } from '../../fixtures/app.js'
import {
  HUNDRED_COMMIT_BLOCK, LARGE_COMMIT_BLOCK, SET_CHANGE_BLOCK, SIGNED_BASE, SIGNED_HEIGHTS, setAt, signedBlockAnswer, simValidator
} from '../../fixtures/chain-simulator/data/commits.js'
import { CURRENT_EPOCH } from '../../fixtures/chain-simulator/data/epochs.js'
import { until } from '../../fixtures/wait.js'

// Every verification runs in the worker thread, which starts under the test runner's loader:
// on a loaded machine this file takes longer than tap's default 30 s.
t.setTimeout(180_000)

const BLOCKS = '/cosmos/base/tendermint/v1beta1/blocks/'
const SETS = '/cosmos/base/tendermint/v1beta1/validatorsets/'
const VECTOR_KEY = 'Au5ZQav3E36PZpGta2xUa8r9xEEo9Biph3fG5i3qaeSG'
const VECTOR_ADDRESS = 'gonka1jwrv4q8hpxc354pr87pt0pkulaep67e9s4z0ym'
const INVALID_COMMIT = 'invalid commit signatures'

interface GatewayBlock { sdk_block: { header: Record<string, unknown>, last_commit: { signatures: Array<Record<string, unknown>> } & Record<string, unknown> } }
const gatewayBlock = (height: number): GatewayBlock => structuredClone(signedBlockAnswer(height)) as GatewayBlock
const validatorsAt = (height: number): Array<{ pub_key: string, voting_power: number }> =>
  setAt(height).map((v) => ({ pub_key: v.pubKey.toString('base64'), voting_power: Number(v.power) }))
const flipBase64 = (text: string, byte: number): string => {
  const bytes = Buffer.from(text, 'base64')
  bytes[byte] = (bytes[byte] as number) ^ 1
  return bytes.toString('base64')
}

t.test('off by default: every optional route answers 403 before reading a body or asking the chain', async (t) => {
  const { app, sim } = await buildTestApp(t)
  const calls = [
    { method: 'POST' as const, url: '/v1/verify-proof', payload: '{"not json' },
    { method: 'POST' as const, url: '/v1/verify-block', payload: '{}' },
    { method: 'GET' as const, url: `/v1/debug/verify/${SIGNED_BASE + 2}` },
    { method: 'GET' as const, url: `/v1/debug/pubkey-to-addr/${VECTOR_KEY}` }
  ]
  for (const call of calls) {
    const res = await app.inject({ ...call, headers: { 'content-type': 'application/json' } })
    t.equal(res.statusCode, 403, call.url)
    t.same(res.json(), { message: 'this optional route is not exposed (EDGE_API_EXPOSE_OPTIONAL_ROUTES=false)' })
  }
  t.equal(sim.count(), 0)
})

// One app for the rest (building one compiles every schema; slow on a loaded machine).
const { app, sim, logs } = await buildTestApp(t, { env: { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' } })
t.beforeEach(async () => {
  sim.clearFaults()
  sim.resetCounts()
})

t.test('GET /v1/debug/pubkey-to-addr: the Go vector from base64 and hex, text/plain', async (t) => {
  for (const key of [VECTOR_KEY, Buffer.from(VECTOR_KEY, 'base64').toString('hex')]) {
    const res = await app.inject(`/v1/debug/pubkey-to-addr/${key}`)
    t.equal(res.statusCode, 200)
    t.equal(res.body, VECTOR_ADDRESS)
    t.equal(res.headers['content-type'], 'text/plain; charset=utf-8')
  }
  const bad = await app.inject('/v1/debug/pubkey-to-addr/notvalid!!!')
  t.equal(bad.statusCode, 400)
  t.same(bad.json(), { message: "invalid pubkey: encoding/hex: invalid byte: U+006E 'n'" })
  t.equal(sim.count(), 0, 'no chain request')
})

t.test('GET /v1/debug/verify/{height}: really signed blocks verify against the chain\'s own set', async (t) => {
  for (const height of SIGNED_HEIGHTS.slice(1)) {
    const res = await app.inject(`/v1/debug/verify/${height}`)
    t.equal(res.statusCode, 200, `block ${height}`)
    t.equal(res.body, 'Block signatures verified')
    t.equal(res.headers['content-type'], 'text/plain; charset=utf-8')
  }
})

t.test('the set fetched is the one that signed: the commit\'s height, one below the block\'s', async (t) => {
  // Block SET_CHANGE_BLOCK's last commit was signed by the 4-validator set; the set at the
  // block's own height already has 100. The Go service fetched that one, and failed here.
  const res = await app.inject(`/v1/debug/verify/${SET_CHANGE_BLOCK}`)
  t.equal(res.statusCode, 200)
  t.same(sim.requests, [
    `${BLOCKS}${SET_CHANGE_BLOCK}`,
    `${SETS}${SET_CHANGE_BLOCK - 1}?pagination.offset=0&pagination.limit=100`
  ])
  t.equal(setAt(SET_CHANGE_BLOCK - 1).length, 4)
  t.equal(setAt(SET_CHANGE_BLOCK).length, 100)

  sim.resetCounts()
  t.equal((await app.inject(`/v1/debug/verify/${LARGE_COMMIT_BLOCK}`)).statusCode, 200, '150 validators: two pages')
  t.equal(sim.count(SETS), 2)
})

t.test('tampered chain data fails with the Go message; the detail is in the log', async (t) => {
  const height = HUNDRED_COMMIT_BLOCK
  const path = `${BLOCKS}${height}`
  const tamper = (change: (sigs: Array<Record<string, unknown>>) => void): GatewayBlock => {
    const answer = gatewayBlock(height)
    change(answer.sdk_block.last_commit.signatures)
    return answer
  }
  const cases: Array<[string, GatewayBlock, RegExp]> = [
    ['one byte of a signature', tamper((s) => { (s[7] as Record<string, unknown>).signature = flipBase64(s[7]?.signature as string, 20) }), /^wrong signature \(#7\)/],
    ['a timestamp, by one nanosecond', tamper((s) => { (s[3] as Record<string, unknown>).timestamp = (s[3]?.timestamp as string).replace(/(\d)Z$/, (_m, d: string) => `${(Number(d) + 1) % 10}Z`) }), /^wrong signature \(#3\)/],
    ['a commit turned into a nil vote', tamper((s) => { (s[0] as Record<string, unknown>).block_id_flag = 'BLOCK_ID_FLAG_NIL' }), /^wrong signature \(#0\)/],
    ['a third of the votes marked absent', tamper((s) => { for (let i = 0; i < 34; i++) s[i] = { block_id_flag: 'BLOCK_ID_FLAG_ABSENT', validator_address: '', timestamp: '0001-01-01T00:00:00Z', signature: '' } }),
      /^invalid commit -- insufficient voting power: got 660, needed more than 666$/],
    ['a signature missing', tamper((s) => { s.pop() }), /^invalid commit -- wrong set size: 100 vs 99$/]
  ]
  for (const [name, answer, detail] of cases) {
    sim.override(path, answer)
    logs.length = 0
    const res = await app.inject(`/v1/debug/verify/${height}`)
    t.equal(res.statusCode, 400, name)
    t.same(res.json(), { message: `block signature verification failed: ${INVALID_COMMIT}` })
    t.match(logs.find((l) => l.msg === 'block signature verification failed'), { detail, height: String(height) }, `${name}: logged`)
  }
  // Another set at the commit's height.
  sim.clearFaults()
  sim.override(`${SETS}${height - 1}`, { validators: validatorsAt(SIGNED_BASE).map((v) => ({ pub_key: { '@type': '/cosmos.crypto.ed25519.PubKey', key: v.pub_key }, voting_power: String(v.voting_power) })) })
  const other = await app.inject(`/v1/debug/verify/${height}`)
  t.equal(other.statusCode, 400)
  t.same(other.json(), { message: `block signature verification failed: ${INVALID_COMMIT}` })
})

t.test('a commit CometBFT cannot decode: 500 failed to decode commit', async (t) => {
  const height = SIGNED_BASE + 5
  const path = `${BLOCKS}${height}`
  const answer = gatewayBlock(height)
  answer.sdk_block.last_commit.signatures[0] = { ...answer.sdk_block.last_commit.signatures[0], signature: '' }
  sim.override(path, answer)
  const missing = await app.inject(`/v1/debug/verify/${height}`)
  t.equal(missing.statusCode, 500)
  t.same(missing.json(), { message: 'failed to decode commit: signature is missing' })
  sim.override(path, { sdk_block: { ...answer.sdk_block, last_commit: { ...answer.sdk_block.last_commit, round: 'x' } } })
  t.same((await app.inject(`/v1/debug/verify/${height}`)).json(), { message: 'failed to decode commit: last_commit.round: must be an integer from -2147483648 to 2147483647' })
  sim.override(path, { sdk_block: { header: answer.sdk_block.header } })
  t.same((await app.inject(`/v1/debug/verify/${height}`)).json(), { message: 'failed to decode commit: nil Commit' })
  t.equal(sim.count(SETS), 0, 'no validator set asked for')
})

t.test('the first block\'s last commit (height 0) was signed by no one: 400, no set asked for', async (t) => {
  const answer = gatewayBlock(SIGNED_BASE + 2)
  const empty = { ...answer.sdk_block, header: { ...answer.sdk_block.header, height: '1' }, last_commit: { height: '0', round: 0, block_id: { hash: '', part_set_header: { total: 0, hash: '' } }, signatures: [] } }
  sim.override(`${BLOCKS}1`, { sdk_block: empty })
  const res = await app.inject('/v1/debug/verify/1')
  t.equal(res.statusCode, 400)
  t.same(res.json(), { message: `block signature verification failed: ${INVALID_COMMIT}` })
  t.equal(sim.count(SETS), 0)
})

t.test('debug/verify: the height is checked before any chain request; chain errors mapped', async (t) => {
  for (const bad of ['0', 'abc', '-5', '1.5', '9223372036854775808', '99999999999999999999']) {
    const res = await app.inject(`/v1/debug/verify/${bad}`)
    t.equal(res.statusCode, 400, bad)
    t.equal(res.json().message, 'Invalid format for parameter height: must be a block height: an integer from 1')
  }
  t.equal(sim.count(), 0)
  sim.fail(BLOCKS, 5, 'block not found')
  const missing = await app.inject('/v1/debug/verify/100')
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), { message: 'block not found' })
  sim.clearFaults()
  const beyond = await app.inject('/v1/debug/verify/9223372036854775807')
  t.equal(beyond.statusCode, 400, 'the gateway\'s InvalidArgument')
  sim.fail(SETS, 14, 'node is syncing')
  t.equal((await app.inject(`/v1/debug/verify/${SIGNED_BASE + 2}`)).statusCode, 503)
  sim.clearFaults()
  sim.override(`${SETS}${SIGNED_BASE + 1}`, { validators: [{ pub_key: { '@type': '/cosmos.crypto.ed25519.PubKey', key: Buffer.alloc(32).toString('base64') }, voting_power: '0' }] })
  const zero = await app.inject(`/v1/debug/verify/${SIGNED_BASE + 2}`)
  t.equal(zero.statusCode, 500, 'a set CometBFT would refuse is chain data gone wrong')
  t.same(zero.json(), { message: 'Internal Server Error' })
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

t.test('POST /v1/verify-proof: the proof /v1/epochs/{epoch}/participants returns verifies against its block\'s app hash', async (t) => {
  const participants = (await app.inject(`/v1/epochs/${CURRENT_EPOCH}/participants`)).json()
  const body = {
    value: participants.active_participants_bytes,
    app_hash: participants.block.header.app_hash,
    proof_ops: participants.proof_ops,
    epoch: CURRENT_EPOCH
  }
  sim.resetCounts()
  const res = await app.inject({ method: 'POST', url: '/v1/verify-proof', payload: body })
  t.equal(res.statusCode, 200)
  t.equal(res.body, '')
  t.equal(sim.count(), 0, 'no chain request')

  const value = Buffer.from(body.value, 'hex')
  value[10] = (value[10] as number) ^ 1
  const badValue = await app.inject({ method: 'POST', url: '/v1/verify-proof', payload: { ...body, value: value.toString('hex') } })
  t.equal(badValue.statusCode, 400)
  t.match(badValue.json().message, new RegExp(`^proof verification failed: proof did not verify existence of key ActiveParticipants/value/.* with given value ${value.toString('hex')}: invalid proof$`))
  const appHash = `${body.app_hash.slice(0, 10)}${body.app_hash[10] === '0' ? '1' : '0'}${body.app_hash.slice(11)}`
  const badHash = await app.inject({ method: 'POST', url: '/v1/verify-proof', payload: { ...body, app_hash: appHash } })
  t.equal(badHash.statusCode, 400)
  t.same(badHash.json(), { message: `proof verification failed: calculated root hash is invalid: expected ${appHash.toUpperCase()} but got ${body.app_hash.toUpperCase()}` })
  const otherEpoch = await app.inject({ method: 'POST', url: '/v1/verify-proof', payload: { ...body, epoch: CURRENT_EPOCH + 1 } })
  t.match(otherEpoch.json().message, /^proof verification failed: key mismatch on operation #0: /)
})

t.test('verify-proof: the Go decode messages, before any work', async (t) => {
  const body = { value: '0a00', app_hash: 'ab', proof_ops: { ops: [{ type: 'ics23:iavl', key: 'a2V5', data: 'dmFsdWU=' }] }, epoch: 1 }
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...body, app_hash: 'xyz' }, "Error decoding app hash: encoding/hex: invalid byte: U+0078 'x'"],
    [{ ...body, value: 'abc' }, 'Error decoding value: encoding/hex: odd length hex string'],
    [{ ...body, proof_ops: { ops: [{ type: 'ics23:iavl', key: 'a2V5', data: '!!' }] } }, 'invalid proof_ops: ops[0].data must be standard base64'],
    [{ ...body, proof_ops: { ops: [{ type: 'ics23:iavl', key: 'a2V', data: '' }] } }, 'invalid proof_ops: ops[0].key must be standard base64'],
    [{ ...body, epoch: -1 }, 'invalid body field epoch: the epoch whose ActiveParticipants entry is proven'],
    [{ epoch: 1 }, 'missing body field value'],
    // The Go test's stub proof (golden file): a proof that is not a proof.
    [body, 'proof verification failed: decoding proof: decoding a proof operator: ']
  ]
  for (const [payload, message] of cases) {
    const res = await app.inject({ method: 'POST', url: '/v1/verify-proof', payload })
    t.equal(res.statusCode, 400, message)
    t.match(res.json().message, message)
  }
  const noKey = await app.inject({ method: 'POST', url: '/v1/verify-proof', payload: { ...body, proof_ops: { ops: [{ type: 'ics23:iavl', data: '' }] } } })
  t.match(noKey.json(), { message: /^proof verification failed: could not calculate root for proof: unrecognized proof type/ }, 'a missing key is an empty key')
})

t.test('the routes\' own admission: beyond the running and queued verifications, 503 at once', async (t) => {
  t.equal(VERIFY_CONCURRENCY, 2)
  t.equal(VERIFY_QUEUE_LIMIT, 16)
  const { app: small, sim: slowSim } = await buildTestApp(t, { env: { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' }, verifyTuning: { concurrency: 1, queueLimit: 1 } })
  slowSim.latency(300, SETS)
  const url = `/v1/debug/verify/${SIGNED_BASE + 2}`
  const running = small.inject(url)
  const queued = small.inject(url)
  await sleep(50)
  const shed = await small.inject(url)
  t.equal(shed.statusCode, 503)
  t.equal(shed.headers['retry-after'], '1')
  t.same(shed.json(), { message: 'too many verifications in progress; retry shortly' })
  t.same(small.shedding.total, { groupQueue: 1 }, 'counted as shed load (edge_api_shed_total{reason="groupQueue"})')
  t.equal((await running).statusCode, 200)
  t.equal((await queued).statusCode, 200, 'the queued one ran when the slot came free')
  t.equal(slowSim.count(BLOCKS), 2, 'the shed one cost the chain nothing')
  t.equal((await small.inject(url)).statusCode, 200, 'and the slots are all back')
})

t.test('a client that leaves while queued gives its slot straight back', async (t) => {
  const { app: small, sim: slowSim, logs: smallLogs } = await buildTestApp(t, { env: { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' }, verifyTuning: { concurrency: 1, queueLimit: 1 } })
  await small.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(small.server.address() as { port: number }).port}`
  slowSim.latency(400, SETS)
  const url = `/v1/debug/verify/${SIGNED_BASE + 2}`
  const running = small.inject(url)
  await sleep(50)
  const controller = new AbortController()
  const leaving = request(`${origin}${url}`, { signal: controller.signal }).catch((err: Error) => err)
  await sleep(50)
  controller.abort()
  t.match(await leaving, { name: 'AbortError' })
  t.equal((await running).statusCode, 200)
  await sleep(50)
  t.ok(smallLogs.some((l) => l.reason === 'client closed the connection while waiting'), 'the queued request was dropped, not run')
  t.equal(slowSim.count(BLOCKS), 1, 'and cost the chain nothing')
  slowSim.clearFaults()
  t.equal((await small.inject(url)).statusCode, 200, 'the slot is free again')
})

t.test('a client that leaves while the chain is read gets no verification done', async (t) => {
  const { app: small, sim: slowSim, logs: smallLogs } = await buildTestApp(t, { env: { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' } })
  await small.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(small.server.address() as { port: number }).port}`
  // The client is gone by the time the validator set arrives.
  slowSim.latency(300, SETS)
  const controller = new AbortController()
  const leaving = request(`${origin}/v1/debug/verify/${LARGE_COMMIT_BLOCK}`, { signal: controller.signal }).catch((err: Error) => err)
  await sleep(100)
  controller.abort()
  t.match(await leaving, { name: 'AbortError' })
  const dropped = (): boolean => smallLogs.some((l) => l.reason === 'client closed the connection before verification')
  await until(dropped, 'the verification dropped, logged as the client\'s doing')
  t.notOk(smallLogs.some((l) => l.level === 50), 'no error logged')
})
