import t from 'tap'
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire'
import { activeParticipantsKey, decodeActiveParticipants } from '../../src/chain/active-participants.js'
import { ACTIVE_PARTICIPANTS, encodeActiveParticipants, EXTREME_PARTICIPANTS, storeKey } from '../../harness/chain-simulator/data/epochs.js'

t.test('the store key is the prefix, the epoch as 8 big-endian bytes, then "/"', async (t) => {
  t.equal(Buffer.from(activeParticipantsKey(42n)).toString('hex'), Buffer.concat([
    Buffer.from('ActiveParticipants/value/'), Buffer.from('000000000000002a', 'hex'), Buffer.from('/')
  ]).toString('hex'))
  t.same(Buffer.from(activeParticipantsKey(18446744073709551615n)), storeKey(18446744073709551615n))
  t.same(Buffer.from(activeParticipantsKey(1n)), storeKey(1n))
})

t.test('decodes every field, skipping the unknown field 9 each participant carries', async (t) => {
  const decoded = decodeActiveParticipants(encodeActiveParticipants(ACTIVE_PARTICIPANTS))
  t.same(decoded, {
    participants: [
      {
        index: 'gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr',
        validator_key: ACTIVE_PARTICIPANTS.participants[0]?.validator_key,
        weight: 1250,
        inference_url: 'https://node1.gonka.network',
        models: ['Qwen/Qwen3-32B', 'Qwen/Qwen3-235B-A22B-Instruct-2507-FP8'],
        seed: { participant: 'gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8x0lzr', epoch_index: 42, signature: 'c2lnbmF0dXJlLTE=' },
        ml_nodes: [
          { ml_nodes: [{ node_id: 'node-a', throughput: 5000, poc_weight: 700, timeslot_allocation: [true, false] }] },
          { ml_nodes: [{ node_id: 'node-b', throughput: 3000, poc_weight: 550, timeslot_allocation: [true, true] }] }
        ],
        voting_powers: [{ model_id: 'Qwen/Qwen3-32B', voting_power: 1250 }]
      },
      {
        index: 'gonka1g9n2kwfe3mxnyl6j7v0y4l0q8zp5hsyw3dkq7v',
        validator_key: ACTIVE_PARTICIPANTS.participants[1]?.validator_key,
        weight: 980,
        inference_url: 'https://inference.alpha-labs.io',
        models: ['Qwen/Qwen3-32B'],
        seed: { participant: 'gonka1g9n2kwfe3mxnyl6j7v0y4l0q8zp5hsyw3dkq7v', epoch_index: 42, signature: 'c2lnbmF0dXJlLTI=' },
        ml_nodes: [{ ml_nodes: [{ node_id: 'gpu-0', throughput: 1200, poc_weight: 980, timeslot_allocation: [false, true] }] }],
        voting_powers: [{ model_id: 'Qwen/Qwen3-32B', voting_power: 1250 }]
      },
      {
        index: 'gonka1v5s4yvc7z3mfd8k9sxq0e7f6p2n3jj8hdl4c2r',
        validator_key: 'not-a-base64-key!',
        weight: 410,
        inference_url: 'http://203.0.113.17:8000',
        models: [],
        seed: null,
        ml_nodes: [],
        voting_powers: [{ model_id: 'Qwen/Qwen3-32B', voting_power: 1250 }]
      }
    ],
    epoch_group_id: 42,
    poc_start_block_height: 1842000,
    effective_block_height: 1842005,
    created_at_block_height: 1842005,
    epoch_id: 42
  })
})

t.test('an empty value is the message with every default', async (t) => {
  t.same(decodeActiveParticipants(new Uint8Array()), {
    participants: [],
    epoch_group_id: 0,
    poc_start_block_height: 0,
    effective_block_height: 0,
    created_at_block_height: 0,
    epoch_id: 0
  })
})

t.test('the Go golden file\'s stub bytes 0a000a0431323334 are rejected, as gogoproto rejects them', async (t) => {
  // An empty participant, then one whose bytes "1234" start with 0x31: field 6 as a fixed64.
  t.throws(() => decodeActiveParticipants(Buffer.from('0a000a0431323334', 'hex')), /wrong wire type 1 for field 6/)
})

t.test('64-bit values are exact: int64 extremes and uint64 max', async (t) => {
  const decoded = decodeActiveParticipants(encodeActiveParticipants(EXTREME_PARTICIPANTS))
  t.equal(decoded.epoch_id, 18446744073709551615n)
  t.equal(decoded.epoch_group_id, 18446744073709551615n)
  t.equal(decoded.created_at_block_height, 9223372036854775807n)
  t.equal(decoded.poc_start_block_height, -9223372036854775808n)
  const p = decoded.participants[0]
  t.equal(p?.weight, 9223372036854775807n)
  t.equal(p?.seed?.epoch_index, 18446744073709551615n)
  t.equal(p?.ml_nodes[0]?.ml_nodes[0]?.throughput, -9223372036854775808n)
})

t.test('repeated bools decode packed or one by one, and a repeated seed merges', async (t) => {
  const w = new BinaryWriter()
  w.tag(1, WireType.LengthDelimited).fork()
  w.tag(6, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string('p').join()
  w.tag(6, WireType.LengthDelimited).fork().tag(2, WireType.Varint).uint64(5).tag(9, WireType.Bit32).fixed32(1).join()
  w.tag(7, WireType.LengthDelimited).fork()
  w.tag(1, WireType.LengthDelimited).fork()
  w.tag(4, WireType.Varint).bool(true).tag(4, WireType.Varint).bool(false)
  w.tag(4, WireType.LengthDelimited).fork().bool(true).join()
  w.tag(5, WireType.Bit64).fixed64(7)
  w.join()
  w.tag(2, WireType.Varint).int32(1) // unknown in ModelMLNodes
  w.join()
  w.tag(8, WireType.LengthDelimited).fork().tag(2, WireType.Varint).int64(-3).tag(3, WireType.Varint).int32(1).join()
  w.join()
  w.tag(7, WireType.Bit32).fixed32(3) // unknown top-level field
  const decoded = decodeActiveParticipants(w.finish())
  const p = decoded.participants[0]
  t.same(p?.voting_powers, [{ model_id: '', voting_power: -3 }], 'voting power with an unknown field skipped')
  t.same(p?.seed, { participant: 'p', epoch_index: 5, signature: '' })
  t.same(p?.ml_nodes, [{ ml_nodes: [{ node_id: '', throughput: 0, poc_weight: 0, timeslot_allocation: [true, false, true] }] }])
})

t.test('rejects bytes that are not an ActiveParticipants', async (t) => {
  const cases: Array<[string, Uint8Array, RegExp]> = [
    ['participants as a varint', Uint8Array.of(0x08, 0x01), /wrong wire type 0 for field 1/],
    ['epoch_id as a string', Uint8Array.of(0x32, 0x01, 0x41), /wrong wire type 2 for field 6/],
    ['a string as a varint', Uint8Array.of(0x0a, 0x02, 0x08, 0x01), /wrong wire type 0 for field 1/],
    ['timeslots as fixed32', Uint8Array.of(0x0a, 0x09, 0x3a, 0x07, 0x0a, 0x05, 0x25, 0x01, 0x00, 0x00, 0x00), /wrong wire type 5 for field 4/],
    ['a truncated length', Uint8Array.of(0x0a, 0x05, 0x01), /premature EOF/],
    ['a truncated varint', Uint8Array.of(0x10, 0xff), /premature EOF|invalid varint/],
    ['field number 0', Uint8Array.of(0x00, 0x01), /illegal tag/],
    ['a stray end-group', Uint8Array.of(0x0c), /wire type 4/]
  ]
  for (const [name, bytes, error] of cases) t.throws(() => decodeActiveParticipants(bytes), error, name)
})
