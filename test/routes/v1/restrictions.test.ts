import t from 'tap'
import { buildTestApp } from '../../fixtures/app.js'

const GATEWAY = '/productscience/inference/restrictions'
const ACCOUNT = 'gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr'
const USAGE = `/v1/restrictions/exemptions/emergency-infrastructure-001/usage/${ACCOUNT}`

t.test('GET /v1/restrictions/status', async (t) => {
  const { app, sim } = await buildTestApp(t)

  await t.test('answers the status with uint64 fields as numbers', async (t) => {
    const res = await app.inject('/v1/restrictions/status')
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/json/)
    t.equal(res.body, '{"is_active":true,"restriction_end_block":1555000,"current_block_height":1250000,"remaining_blocks":305000}')
  })

  await t.test('leaves zero fields out once restrictions are lifted (omitempty)', async (t) => {
    sim.override(`${GATEWAY}/status`, { is_active: false, restriction_end_block: '1555000', current_block_height: '1843210', remaining_blocks: '0' })
    const res = await app.inject('/v1/restrictions/status')
    t.equal(res.body, '{"restriction_end_block":1555000,"current_block_height":1843210}')
  })

  await t.test('keeps 18446744073709551615 exact', async (t) => {
    sim.override(`${GATEWAY}/status`, '{"is_active":true,"restriction_end_block":"18446744073709551615","current_block_height":"9223372036854775807","remaining_blocks":"9223372036854775808"}')
    const res = await app.inject('/v1/restrictions/status')
    t.equal(res.body, '{"is_active":true,"restriction_end_block":18446744073709551615,"current_block_height":9223372036854775807,"remaining_blocks":9223372036854775808}')
  })

  await t.test('answers {} when the chain answers null', async (t) => {
    sim.override(`${GATEWAY}/status`, 'null')
    const res = await app.inject('/v1/restrictions/status')
    t.equal(res.statusCode, 200)
    t.equal(res.body, '{}')
  })

  await t.test('maps gateway errors by gRPC code', async (t) => {
    sim.clearFaults()
    for (const [code, status] of [[5, 404], [3, 400], [16, 401], [7, 403], [8, 429], [14, 503], [13, 500]] as const) {
      sim.clearFaults()
      sim.fail(`${GATEWAY}/status`, code, `status said ${code}`)
      const res = await app.inject('/v1/restrictions/status')
      t.equal(res.statusCode, status, `gRPC ${code} → ${status}`)
      t.same(res.json(), { message: `status said ${code}` })
    }
  })
})

t.test('GET /v1/restrictions/exemptions', async (t) => {
  const { app, sim } = await buildTestApp(t)

  await t.test('answers every exemption, zero fields left out', async (t) => {
    const res = await app.inject('/v1/restrictions/exemptions')
    t.equal(res.statusCode, 200)
    t.same(res.json(), {
      exemptions: [
        {
          exemption_id: 'emergency-infrastructure-001',
          from_address: '*',
          to_address: 'gonka1d8k3w0f5s7pqx2n4m6c9v1z0yl7tj3ghe5aru8',
          max_amount: '1000000',
          usage_limit: 5,
          expiry_block: 1500000,
          justification: 'Critical infrastructure maintenance'
        },
        {
          exemption_id: 'exchange-listing.2025',
          from_address: 'gonka1m3p0x8c2v6n9b4l7k1j5h0g3f8d2s6a9q4w7e1',
          to_address: '*',
          max_amount: '250000000000',
          expiry_block: 1555000,
          justification: 'Market-maker funding approved by proposal 12'
        }
      ],
      pagination: { total: 2 }
    })
    t.match(res.body, /^\{"exemptions":\[\{"exemption_id":/, 'exemptions comes first')
    t.equal(sim.count(`${GATEWAY}/exemptions`), 1)
  })

  await t.test('answers "exemptions": null when there are none, and drops a null pagination', async (t) => {
    sim.override(`${GATEWAY}/exemptions`, { exemptions: [], pagination: null })
    const res = await app.inject('/v1/restrictions/exemptions')
    t.equal(res.body, '{"exemptions":null}')
  })

  await t.test('answers "exemptions": null when the chain answers null', async (t) => {
    sim.override(`${GATEWAY}/exemptions`, 'null')
    const res = await app.inject('/v1/restrictions/exemptions')
    t.equal(res.statusCode, 200)
    t.equal(res.body, '{"exemptions":null}')
  })

  await t.test('keeps uint64 fields exact', async (t) => {
    sim.override(`${GATEWAY}/exemptions`, '{"exemptions":[{"exemption_id":"x","usage_limit":"18446744073709551615","expiry_block":"9223372036854775807"}],"pagination":{"next_key":null,"total":"18446744073709551615"}}')
    const res = await app.inject('/v1/restrictions/exemptions')
    t.equal(res.body, '{"exemptions":[{"exemption_id":"x","usage_limit":18446744073709551615,"expiry_block":9223372036854775807}],"pagination":{"total":18446744073709551615}}')
  })

  await t.test('maps gateway errors by gRPC code', async (t) => {
    sim.clearFaults()
    sim.fail(`${GATEWAY}/exemptions`, 14, 'node is catching up')
    const res = await app.inject('/v1/restrictions/exemptions')
    t.equal(res.statusCode, 503)
    t.same(res.json(), { message: 'node is catching up' })
  })
})

t.test('GET /v1/restrictions/exemptions/:id/usage/:account', async (t) => {
  const { app, sim } = await buildTestApp(t)

  await t.test('answers the usage of one account, filtered by the chain', async (t) => {
    const res = await app.inject(USAGE)
    t.equal(res.statusCode, 200)
    t.equal(res.body, `{"usage_entries":[{"exemption_id":"emergency-infrastructure-001","account_address":"${ACCOUNT}","usage_count":2}],"pagination":{"total":1}}`)
    t.same(sim.requests, [`${GATEWAY}/exemption_usage?exemption_id=emergency-infrastructure-001&account_address=${ACCOUNT}`])
  })

  await t.test('an id with dots, colons and underscores reaches the chain as a query value', async (t) => {
    sim.resetCounts()
    const res = await app.inject(`/v1/restrictions/exemptions/exchange-listing.2025/usage/${ACCOUNT}`)
    t.equal(res.statusCode, 200)
    t.equal(res.json().usage_entries[0].usage_count, 3)
    await app.inject(`/v1/restrictions/exemptions/a_b:c.d/usage/${ACCOUNT}`)
    t.match(sim.requests[1], /exemption_id=a_b%3Ac\.d&/)
  })

  await t.test('answers "usage_entries": null for an exemption nobody used', async (t) => {
    const res = await app.inject(`/v1/restrictions/exemptions/never-used/usage/${ACCOUNT}`)
    t.equal(res.statusCode, 200)
    t.equal(res.body, '{"usage_entries":null,"pagination":{}}', 'total 0 and a null next_key are left out')
  })

  await t.test('keeps a usage count of 18446744073709551615 exact', async (t) => {
    sim.override(`${GATEWAY}/exemption_usage`, `{"usage_entries":[{"exemption_id":"e","account_address":"${ACCOUNT}","usage_count":"18446744073709551615"}]}`)
    const res = await app.inject(USAGE)
    t.equal(res.body, `{"usage_entries":[{"exemption_id":"e","account_address":"${ACCOUNT}","usage_count":18446744073709551615}]}`)
    sim.clearFaults()
  })

  await t.test('passes the chain\'s InvalidArgument on as 400', async (t) => {
    const res = await app.inject('/v1/restrictions/exemptions/never-used/usage/cosmos1qyqszqgpqyqszqgpqyqszqgpqyqszqgp0wkp5z')
    t.equal(res.statusCode, 400)
    t.match(res.json().message, /^invalid account address: /)
  })

  await t.test('rejects a bad exemption id before any chain request', async (t) => {
    sim.resetCounts()
    for (const bad of ['a'.repeat(129), 'has%20space', '..%2F..%2Fstatus', 'x%2Fy', 'caf%C3%A9', 'a%26account_address%3Dx', 'a%3Fb']) {
      const res = await app.inject(`/v1/restrictions/exemptions/${bad}/usage/${ACCOUNT}`)
      t.equal(res.statusCode, 400, bad)
      t.same(res.json(), { message: 'Invalid format for parameter id: must be 1 to 128 letters, digits, ".", "_", ":" or "-"' })
    }
    t.equal(sim.count(), 0, 'no chain request made')
  })

  await t.test('rejects a bad account before any chain request', async (t) => {
    sim.resetCounts()
    for (const bad of ['GONKA1ABC', 'gonka1%2F..', 'a'.repeat(91), 'gonka1%26x%3D1']) {
      const res = await app.inject(`/v1/restrictions/exemptions/never-used/usage/${bad}`)
      t.equal(res.statusCode, 400, bad)
      t.same(res.json(), { message: 'Invalid format for parameter account: must be a bech32 address: lower-case letters and digits, at most 90 characters' })
    }
    t.equal(sim.count(), 0, 'no chain request made')
  })

  await t.test('answers 503 when the chain is unreachable', async (t) => {
    await sim.refuse()
    t.teardown(() => sim.restore())
    const res = await app.inject(USAGE)
    t.equal(res.statusCode, 503)
    t.same(res.json(), { message: 'chain unavailable' })
  })
})
