import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'
import { BLOCK_HEIGHT, PARTICIPANTS } from '../../../harness/chain-simulator/data/participants.js'

const LIST = '/productscience/inference/inference/participants_with_balances'
const ONE = '/productscience/inference/inference/inference_participant/'

t.test('GET /v1/participants follows next_key across pages and keeps the first page height', async (t) => {
  const { app, sim } = await buildTestApp(t)
  const res = await app.inject('/v1/participants')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json()
  t.equal(body.block_height, Number(BLOCK_HEIGHT))
  t.same(body.participants.map((p: { id: string }) => p.id), PARTICIPANTS.map((p) => p.address))
  t.same(body.participants[0], {
    id: PARTICIPANTS[0].address,
    url: PARTICIPANTS[0].url,
    coins_owed: 400,
    refunds_owed: 0,
    balance: 1500000000,
    voting_power: 1250,
    reputation: 0
  })
  t.equal(body.participants[2].balance, 0, 'no ngonka coin → balance 0')
  t.equal(sim.count(LIST), 2, 'two pages, two chain requests')
  t.match(sim.requests[0], /pagination\.limit=1000/)
  t.match(sim.requests[1], /pagination\.key=%2B%2F%2B%2FAQ%3D%3D/, 'the key survives as base64 with + / =')
})

t.test('GET /v1/participants keeps a 9223372036854775807 balance exact', async (t) => {
  const { app } = await buildTestApp(t)
  const res = await app.inject('/v1/participants')
  t.match(res.body, /"balance":9223372036854775807[,}]/)
})

t.test('GET /v1/participants answers null when the chain has none', async (t) => {
  const { app, sim } = await buildTestApp(t)
  sim.override(LIST, { participants: [], pagination: { next_key: null }, block_height: '7' })
  const res = await app.inject('/v1/participants')
  t.equal(res.statusCode, 200)
  t.equal(res.body, '{"participants":null,"block_height":7}')
})

t.test('GET /v1/participants fills fields the chain leaves out with their zero values', async (t) => {
  const { app, sim } = await buildTestApp(t)
  sim.override(LIST, { participants: [{}, { participant: { address: 'gonka1bare' }, balances: null }] })
  const res = await app.inject('/v1/participants')
  t.equal(res.statusCode, 200)
  const zero = { id: '', url: '', coins_owed: 0, refunds_owed: 0, balance: 0, voting_power: 0, reputation: 0 }
  t.same(res.json(), { participants: [zero, { ...zero, id: 'gonka1bare' }], block_height: 0 })
  sim.override(LIST, { pagination: {} })
  t.equal((await app.inject('/v1/participants')).body, '{"participants":null,"block_height":0}')
})

t.test('GET /v1/participants gives up on a chain that never stops paginating', async (t) => {
  const { app, sim } = await buildTestApp(t)
  sim.override(LIST, { participants: [], pagination: { next_key: 'AA==' }, block_height: '7' })
  const res = await app.inject('/v1/participants')
  t.equal(res.statusCode, 500)
  t.same(res.json(), { message: 'chain kept paginating participants beyond 1000 pages' })
})

t.test('GET /v1/participants maps chain errors', async (t) => {
  const { app, sim } = await buildTestApp(t)
  for (const [code, status] of [[14, 503], [8, 429], [13, 500]] as const) {
    sim.clearFaults()
    sim.fail(LIST, code, `chain said ${code}`)
    const res = await app.inject('/v1/participants')
    t.equal(res.statusCode, status, `gRPC ${code} → ${status}`)
    t.same(res.json(), { message: `chain said ${code}` })
  }
})

t.test('GET /v1/participants/:address', async (t) => {
  const { app, sim } = await buildTestApp(t)

  await t.test('answers the account', async (t) => {
    const res = await app.inject(`/v1/participants/${PARTICIPANTS[1].address}`)
    t.equal(res.statusCode, 200)
    t.equal(res.body, '{"pubkey":"Au5ZQav3E36PZpGta2xUa8r9xEEo9Biph3fG5i3qaeSG","balance":9223372036854775807,"denom":"ngonka"}')
  })

  await t.test('maps NotFound to 404 with the chain message', async (t) => {
    const res = await app.inject('/v1/participants/gonka1unknown')
    t.equal(res.statusCode, 404)
    t.same(res.json(), { message: 'participant gonka1unknown not found' })
  })

  await t.test('answers 404 Account not found when the chain answers null', async (t) => {
    sim.override(`${ONE}gonka1null`, 'null')
    const res = await app.inject('/v1/participants/gonka1null')
    t.equal(res.statusCode, 404)
    t.same(res.json(), { message: 'Account not found' })
  })

  await t.test('fills what the chain leaves out; anything but an object is no account', async (t) => {
    sim.override(`${ONE}gonka1empty`, {})
    t.equal((await app.inject('/v1/participants/gonka1empty')).body, '{"pubkey":"","balance":0,"denom":""}')
    sim.override(`${ONE}gonka1text`, '"not an account"')
    const res = await app.inject('/v1/participants/gonka1text')
    t.equal(res.statusCode, 404)
    t.same(res.json(), { message: 'Account not found' })
  })

  await t.test('rejects bad addresses before any chain request', async (t) => {
    sim.resetCounts()
    for (const bad of ['GONKA1ABC', 'gonka1%2F..%2Fnode_info', 'a'.repeat(91), 'gonka1%C3%A9', 'gonka1@x', 'gonka1%23x', '..%2F..%2Fcosmos']) {
      const res = await app.inject(`/v1/participants/${bad}`)
      t.equal(res.statusCode, 400, bad)
      t.same(res.json(), { message: 'Invalid format for parameter address: must be a bech32 address: lower-case letters and digits, at most 90 characters' })
    }
    t.equal(sim.count(), 0, 'no chain request made')
  })

  await t.test('ignores unknown query parameters', async (t) => {
    const res = await app.inject(`/v1/participants/${PARTICIPANTS[0].address}?_=123&cachebust=x`)
    t.equal(res.statusCode, 200)
  })
})
