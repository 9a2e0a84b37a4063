import t from 'tap'
import { bls12_381 as bls12381 } from '@noble/curves/bls12-381.js'
import { buildTestApp } from '../../fixtures/app.js'
import {
  ALLOWED_KEY, COMPLETED_REQUEST_ID, FINAL_SIGNATURE, G1_OUTSIDE_SUBGROUP, GROUP_PUBLIC_KEY, PENDING_REQUEST_ID, slotPublicKeys, VALIDATION_SIGNATURE
} from '../../../harness/chain-simulator/data/bls.js'

const GATEWAY = '/productscience/inference/bls'
const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64')
/** The gateway path segment of a request id (as the simulator sees it, percent-decoded). */
function gatewayId (hex: string): string {
  const text = Buffer.from(hex, 'hex').toString('base64url')
  return text + '='.repeat((4 - text.length % 4) % 4)
}
const { Fp } = bls12381.fields

/** The expected encodings, built here from noble's affine coordinates, not from src. */
const limb = (n: bigint): string => '00'.repeat(16) + Buffer.from(Fp.toBytes(n)).toString('hex')
function g1Limbs (compressed: Uint8Array): string {
  const { x, y } = bls12381.G1.Point.fromBytes(compressed).toAffine()
  return b64(Buffer.from(limb(x) + limb(y), 'hex'))
}
function g2Limbs (compressed: Uint8Array): string {
  const { x, y } = bls12381.G2.Point.fromBytes(compressed).toAffine()
  return b64(Buffer.from(limb(x.c0) + limb(x.c1) + limb(y.c0) + limb(y.c1), 'hex'))
}

const PARTICIPANTS = [
  { address: 'gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr', percentage_weight: '0.625000000000000000', secp256k1_public_key: 'A2Ez3kUHRt1gp0jC8pEsXv3RRHlPUGJOmTFDrJ4oOjEu', slot_start_index: 0, slot_end_index: 62, allowed_secp256k1_public_keys: [ALLOWED_KEY] },
  { address: 'gonka1g9n2kwfe3mxnyl6j7v0y4l0q8zp5hsyw3dkq7v', percentage_weight: '0.375000000000000000', secp256k1_public_key: 'A2Ez3kUHRt1gp0jC8pEsXv3RRHlPUGJOmTFDrJ4oOjEu', slot_start_index: 63, slot_end_index: 99, allowed_secp256k1_public_keys: [] }
]
/** The complaints as protoToAPIJSON writes them: the one not answered yet with false, null, null. */
const COMPLAINTS = [
  { dealer_index: 1, complainer_index: 0, disputed_slot_index: 63, disputed_ciphertext_index: 2, response_submitted: true, response_share_bytes: 'c2hhcmUtNjM=', response_opening_material: 'b3BlbmluZy02Mw==' },
  { dealer_index: 1, complainer_index: 0, disputed_slot_index: 64, disputed_ciphertext_index: 0, response_submitted: false, response_share_bytes: null, response_opening_material: null }
]

t.test('GET /v1/bls/epoch/:id', async (t) => {
  const { app, sim } = await buildTestApp(t)

  await t.test('answers EpochBLSData as protoToAPIJSON writes it, with both points uncompressed', async (t) => {
    const res = await app.inject('/v1/bls/epoch/7')
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/json/)
    t.same(res.json(), {
      epoch_data: {
        epoch_id: 7,
        i_total_slots: 100,
        t_slots_degree: 50,
        participants: PARTICIPANTS,
        dkg_phase: 3,
        dealing_phase_deadline_block: 1843120,
        verifying_phase_deadline_block: 1843125,
        disputing_phase_deadline_block: 1843128,
        group_public_key: b64(GROUP_PUBLIC_KEY),
        dealer_parts: [
          {
            dealer_address: 'gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr',
            commitments: [b64(GROUP_PUBLIC_KEY)],
            participant_shares: [{ encrypted_shares: ['c2hhcmUtMA==', 'c2hhcmUtMQ=='] }]
          },
          null
        ],
        verification_submissions: [{ dealer_validity: [true, false] }, { dealer_validity: [] }],
        valid_dealers: [true, false],
        candidate_valid_dealers: [true, false],
        dealer_complaints: COMPLAINTS,
        validation_signature: b64(VALIDATION_SIGNATURE),
        slot_public_keys: slotPublicKeys(100)
      },
      group_public_key_uncompressed_256: g2Limbs(GROUP_PUBLIC_KEY),
      validation_signature_uncompressed_128: g1Limbs(VALIDATION_SIGNATURE)
    })
    const body = res.json()
    t.equal(Buffer.from(body.group_public_key_uncompressed_256, 'base64').length, 256)
    t.equal(Buffer.from(body.validation_signature_uncompressed_128, 'base64').length, 128)
    t.match(res.body, /^\{"epoch_data":\{"epoch_id":7,"i_total_slots":100,/, 'keys in the proto order, integers as numbers')
    t.match(res.body, /"dkg_phase":3,/, 'the enum as its number (DKG_PHASE_COMPLETED), as testermint and the deployed wire read it')
    t.same(sim.requests, [`${GATEWAY}/epoch_data/7`])
  })

  await t.test('/v1/bls/epochs/:id is the same answer', async (t) => {
    const [one, other] = await Promise.all([app.inject('/v1/bls/epoch/7'), app.inject('/v1/bls/epochs/7')])
    t.equal(other.statusCode, 200)
    t.equal(other.body, one.body)
  })

  await t.test('answers null for points that do not decode or are outside the subgroup', async (t) => {
    const res = await app.inject('/v1/bls/epoch/8')
    t.equal(res.statusCode, 200)
    const body = res.json()
    t.equal(body.group_public_key_uncompressed_256, null)
    t.equal(body.validation_signature_uncompressed_128, null)
    t.equal(body.epoch_data.validation_signature, b64(G1_OUTSIDE_SUBGROUP), 'the raw bytes are still there')
  })

  await t.test('an epoch still dealing: every field present with its default, empty bytes null, no points', async (t) => {
    const res = await app.inject('/v1/bls/epoch/9')
    t.equal(res.body, '{"epoch_data":{"epoch_id":9,"i_total_slots":0,"t_slots_degree":0,"participants":[],"dkg_phase":1,' +
      '"dealing_phase_deadline_block":0,"verifying_phase_deadline_block":0,"disputing_phase_deadline_block":0,"group_public_key":null,' +
      '"dealer_parts":[],"verification_submissions":[],"valid_dealers":[],"candidate_valid_dealers":[],"dealer_complaints":[],"validation_signature":null,' +
      '"slot_public_keys":[]},"group_public_key_uncompressed_256":null,"validation_signature_uncompressed_128":null}')
  })

  await t.test('keeps uint64 and int64 extremes exact', async (t) => {
    const res = await app.inject('/v1/bls/epoch/18446744073709551615')
    t.equal(res.statusCode, 200)
    t.match(res.body, /^\{"epoch_data":\{"epoch_id":18446744073709551615,/)
    t.match(res.body, /"dealing_phase_deadline_block":9223372036854775807,/)
  })

  await t.test('normalises leading zeros before asking the chain', async (t) => {
    sim.resetCounts()
    const res = await app.inject('/v1/bls/epochs/007')
    t.equal(res.statusCode, 200)
    t.same(sim.requests, [`${GATEWAY}/epoch_data/7`])
  })

  await t.test('answers an empty epoch_data when the chain answers null or no epoch_data', async (t) => {
    sim.override(`${GATEWAY}/epoch_data/10`, 'null')
    sim.override(`${GATEWAY}/epoch_data/11`, {})
    for (const id of [10, 11]) {
      const res = await app.inject(`/v1/bls/epoch/${id}`)
      t.equal(res.statusCode, 200)
      t.equal(res.body, '{"epoch_data":{"epoch_id":0,"i_total_slots":0,"t_slots_degree":0,"participants":[],"dkg_phase":0,' +
        '"dealing_phase_deadline_block":0,"verifying_phase_deadline_block":0,"disputing_phase_deadline_block":0,"group_public_key":null,' +
        '"dealer_parts":[],"verification_submissions":[],"valid_dealers":[],"candidate_valid_dealers":[],"dealer_complaints":[],"validation_signature":null,' +
        '"slot_public_keys":[]},"group_public_key_uncompressed_256":null,"validation_signature_uncompressed_128":null}')
    }
  })

  await t.test('rejects ids that are not uint64 before any chain request', async (t) => {
    sim.resetCounts()
    const binder = (value: string, reason: string): string =>
      `Invalid format for parameter id: error binding string parameter: strconv.ParseUint: parsing ${JSON.stringify(value)}: ${reason}`
    const cases: Array<[string, string]> = [
      ['18446744073709551616', binder('18446744073709551616', 'value out of range')],
      ['99999999999999999999', binder('99999999999999999999', 'value out of range')],
      ['123456789012345678901', binder('123456789012345678901', 'value out of range')],
      ['abc', binder('abc', 'invalid syntax')],
      ['-1', binder('-1', 'invalid syntax')],
      ['1.5', binder('1.5', 'invalid syntax')],
      ['0x10', binder('0x10', 'invalid syntax')],
      ['%2F..%2Fparams', binder('/../params', 'invalid syntax')],
      ['1%20', binder('1 ', 'invalid syntax')],
      ['%0A', 'Invalid format for parameter id: error binding string parameter: strconv.ParseUint: parsing "\\n": invalid syntax'],
      ['', 'Invalid format for parameter id: parameter \'id\' is empty, can\'t bind its value']
    ]
    for (const [bad, message] of cases) {
      const res = await app.inject(`/v1/bls/epoch/${bad}`)
      t.equal(res.statusCode, 400, bad)
      t.same(res.json(), { message }, bad)
    }
    const alias = await app.inject('/v1/bls/epochs/18446744073709551616')
    t.equal(alias.statusCode, 400)
    t.equal(sim.count(), 0, 'no chain request made')
    const zeros = await app.inject(`/v1/bls/epochs/${'0'.repeat(30)}7`)
    t.equal(zeros.statusCode, 200, 'leading zeros beyond 20 digits are still a uint64, as for ParseUint')
  })

  await t.test('every gateway error is 500 "Failed to query BLS epoch data: …", NotFound included', async (t) => {
    const notFound = await app.inject('/v1/bls/epoch/12')
    t.equal(notFound.statusCode, 500)
    t.same(notFound.json(), { message: 'Failed to query BLS epoch data: no DKG data found for epoch 12' })
    for (const code of [3, 13, 14]) {
      sim.clearFaults()
      sim.fail(`${GATEWAY}/epoch_data`, code, `chain said ${code}`)
      const res = await app.inject('/v1/bls/epoch/7')
      t.equal(res.statusCode, 500, `gRPC ${code}`)
      t.same(res.json(), { message: `Failed to query BLS epoch data: chain said ${code}` })
    }
    sim.clearFaults()
  })

  await t.test('keeps 503 when the chain is unreachable', async (t) => {
    await sim.refuse()
    const res = await app.inject('/v1/bls/epoch/7')
    await sim.restore()
    t.equal(res.statusCode, 503)
    t.same(res.json(), { message: 'chain unavailable' })
  })
})

t.test('GET /v1/bls/epoch/:id keeps 504 when the chain does not answer in time', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: { EDGE_API_CHAIN_TIMEOUT: '100ms' } })
  sim.hang(`${GATEWAY}/epoch_data`)
  const res = await app.inject('/v1/bls/epoch/7')
  t.equal(res.statusCode, 504)
  t.same(res.json(), { message: 'chain query timed out' })
})

t.test('GET /v1/bls/signatures/:request_id', async (t) => {
  const { app, sim } = await buildTestApp(t)
  const SIGNING = `${GATEWAY}/signing_status/`

  await t.test('answers a completed request with its signature uncompressed', async (t) => {
    const res = await app.inject(`/v1/bls/signatures/${COMPLETED_REQUEST_ID}`)
    t.equal(res.statusCode, 200)
    t.same(res.json(), {
      signing_request: {
        request_id: b64(Buffer.from(COMPLETED_REQUEST_ID, 'hex')),
        current_epoch_id: 7,
        chain_id: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE=',
        data: ['AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAACo='],
        encoded_data: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAACo=',
        message_hash: '3q2+796tvu/erb7v3q2+796tvu/erb7v3q2+796tvu8=',
        status: 3,
        partial_signatures: [
          { participant_address: 'gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr', slot_indices: [0, 1, 2], signature: b64(FINAL_SIGNATURE) }
        ],
        final_signature: b64(FINAL_SIGNATURE),
        created_block_height: 1843200,
        deadline_block_height: 1843300,
        attempt: 1
      },
      uncompressed_signature_128: g1Limbs(FINAL_SIGNATURE)
    })
    t.match(res.body, /^\{"signing_request":\{"request_id":/)
  })

  await t.test('sends the request id to the chain as padded base64url in one path segment', async (t) => {
    sim.resetCounts()
    await app.inject(`/v1/bls/signatures/${COMPLETED_REQUEST_ID}`)
    const expected = gatewayId(COMPLETED_REQUEST_ID)
    t.match(expected, /[-_].*=$/, 'the id has bytes that base64 writes as "+" or "/", and padding')
    t.same(sim.requests, [SIGNING + expected])
    t.same(Buffer.from(expected, 'base64'), Buffer.from(COMPLETED_REQUEST_ID, 'hex'), 'the gateway decodes the same bytes')
  })

  await t.test('accepts upper-case hex', async (t) => {
    const res = await app.inject(`/v1/bls/signatures/${COMPLETED_REQUEST_ID.toUpperCase()}`)
    t.equal(res.statusCode, 200)
    t.equal(res.json().signing_request.status, 3)
  })

  await t.test('a pending request: status as its number (PENDING_SIGNING), every field present, no signature yet', async (t) => {
    const res = await app.inject(`/v1/bls/signatures/${PENDING_REQUEST_ID}`)
    t.equal(res.statusCode, 200)
    t.equal(res.body, `{"signing_request":{"request_id":"${b64(Buffer.from(PENDING_REQUEST_ID, 'hex'))}","current_epoch_id":7,` +
      '"chain_id":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE=","data":[],"encoded_data":null,"message_hash":null,' +
      '"status":1,"partial_signatures":[],"final_signature":null,' +
      '"created_block_height":1843210,"deadline_block_height":0,"attempt":2},"uncompressed_signature_128":null}')
  })

  await t.test('NotFound is 200 {"signing_request": null}: clients poll until it exists', async (t) => {
    const res = await app.inject('/v1/bls/signatures/00ff')
    t.equal(res.statusCode, 200)
    t.equal(res.body, '{"signing_request":null}')
  })

  await t.test('a completed request whose signature is not a valid G1 point: null', async (t) => {
    const id = 'aa'.repeat(32)
    const request = { request_id: b64(Buffer.from(id, 'hex')), status: 'THRESHOLD_SIGNING_STATUS_COMPLETED', partial_signatures: [] }
    for (const finalSignature of [b64(G1_OUTSIDE_SUBGROUP), b64(FINAL_SIGNATURE.subarray(1)), null]) {
      sim.override(SIGNING + gatewayId(id), { signing_request: { ...request, final_signature: finalSignature } })
      const res = await app.inject(`/v1/bls/signatures/${id}`)
      t.equal(res.statusCode, 200)
      t.equal(res.json().signing_request.status, 3)
      t.equal(res.json().uncompressed_signature_128, null)
    }
  })

  await t.test('a failed request keeps its signature compressed only', async (t) => {
    const id = 'bb'.repeat(32)
    sim.override(SIGNING + gatewayId(id), {
      signing_request: { status: 'THRESHOLD_SIGNING_STATUS_FAILED', final_signature: b64(FINAL_SIGNATURE) }
    })
    const res = await app.inject(`/v1/bls/signatures/${id}`)
    t.same(res.json().signing_request.status, 4)
    t.same(res.json().signing_request.final_signature, b64(FINAL_SIGNATURE))
    t.equal(res.json().uncompressed_signature_128, null)
  })

  await t.test('an enum value edge-api does not know: a number stays itself, an unknown name is 0 (unset)', async (t) => {
    sim.override(SIGNING + gatewayId('c1c1'), { signing_request: { status: 9 } })
    sim.override(SIGNING + gatewayId('c2c2'), { signing_request: { status: 'THRESHOLD_SIGNING_STATUS_FROM_A_NEWER_CHAIN' } })
    t.equal((await app.inject('/v1/bls/signatures/c1c1')).json().signing_request.status, 9)
    t.equal((await app.inject('/v1/bls/signatures/c2c2')).json().signing_request.status, 0)
  })

  await t.test('keeps uint64 and int64 extremes exact', async (t) => {
    const id = 'cc'.repeat(4)
    sim.override(SIGNING + gatewayId(id),
      '{"signing_request":{"current_epoch_id":"18446744073709551615","status":"THRESHOLD_SIGNING_STATUS_EXPIRED","created_block_height":"9223372036854775807","deadline_block_height":"-9223372036854775808"}}')
    const res = await app.inject(`/v1/bls/signatures/${id}`)
    t.equal(res.body, '{"signing_request":{"request_id":null,"current_epoch_id":18446744073709551615,"chain_id":null,"data":[],"encoded_data":null,' +
      '"message_hash":null,"status":5,"partial_signatures":[],"final_signature":null,' +
      '"created_block_height":9223372036854775807,"deadline_block_height":-9223372036854775808,"attempt":0},"uncompressed_signature_128":null}')
  })

  await t.test('a chain answering null or no signing_request gives an empty one', async (t) => {
    sim.override(SIGNING + gatewayId('dddddd'), 'null')
    sim.override(SIGNING + gatewayId('eeeeee'), {})
    for (const id of ['dddddd', 'eeeeee']) {
      const res = await app.inject(`/v1/bls/signatures/${id}`)
      t.equal(res.body, '{"signing_request":{"request_id":null,"current_epoch_id":0,"chain_id":null,"data":[],"encoded_data":null,' +
        '"message_hash":null,"status":0,"partial_signatures":[],"final_signature":null,' +
        '"created_block_height":0,"deadline_block_height":0,"attempt":0},"uncompressed_signature_128":null}')
    }
  })

  await t.test('other gateway errors are 500 "Failed to query BLS signature data: …"', async (t) => {
    for (const code of [3, 13, 14]) {
      sim.clearFaults()
      sim.fail(SIGNING, code, `backend failure ${code}`)
      const res = await app.inject(`/v1/bls/signatures/${PENDING_REQUEST_ID}`)
      t.equal(res.statusCode, 500, `gRPC ${code}`)
      t.same(res.json(), { message: `Failed to query BLS signature data: backend failure ${code}` })
    }
    sim.clearFaults()
  })

  await t.test('keeps 503 when the chain is unreachable', async (t) => {
    await sim.refuse()
    const res = await app.inject(`/v1/bls/signatures/${PENDING_REQUEST_ID}`)
    await sim.restore()
    t.equal(res.statusCode, 503)
    t.same(res.json(), { message: 'chain unavailable' })
  })

  await t.test('rejects request ids that are not hex before any chain request', async (t) => {
    sim.resetCounts()
    for (const bad of ['not-hex', 'abc', 'zz', '0x00ff', 'ab'.repeat(65), '%2F..%2Fparams', 'ab%20cd', 'ab%00']) {
      const res = await app.inject(`/v1/bls/signatures/${bad}`)
      t.equal(res.statusCode, 400, bad)
      t.same(res.json(), { message: 'Invalid request ID format (must be hex-encoded)' })
    }
    t.equal(sim.count(), 0, 'no chain request made')
  })

  await t.test('the longest id accepted is 64 bytes', async (t) => {
    const res = await app.inject(`/v1/bls/signatures/${'ab'.repeat(64)}`)
    t.equal(res.statusCode, 200)
    t.equal(res.body, '{"signing_request":null}')
  })
})
