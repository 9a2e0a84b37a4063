import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'
import {
  HUNDRED_COMMIT_BLOCK, LARGE_COMMIT_BLOCK, SET_CHANGE_BLOCK, SIGNED_BASE, SIGNED_HEIGHTS, setAt
} from '../../../harness/chain-simulator/data/commits.js'
import { CURRENT_EPOCH } from '../../../harness/chain-simulator/data/epochs.js'
import { BLOCKS, INVALID_COMMIT, SETS, flipBase64, gatewayBlock, validatorsAt, type GatewayBlock } from '../../fixtures/verify/route-bodies.js'

// Every verification runs in the worker thread, which starts under the test runner's loader:
// on a loaded machine this file takes longer than tap's default 30 s.
t.setTimeout(180_000)

const VECTOR_KEY = 'Au5ZQav3E36PZpGta2xUa8r9xEEo9Biph3fG5i3qaeSG'
const VECTOR_ADDRESS = 'gonka1jwrv4q8hpxc354pr87pt0pkulaep67e9s4z0ym'

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
