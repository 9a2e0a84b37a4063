import { BinaryReader, WireType } from '@bufbuild/protobuf/wire'
import { exactInteger, type Int64Value } from '../wire/schema.js'

// inference.inference.ActiveParticipants as the chain stores it. The REST gateway has no
// query that returns it with a proof, so edge-api reads the raw store value with an ABCI
// query and decodes the protobuf itself. Field numbers: inference-chain/proto/inference/
// inference/activeparticipants.proto (gonka-ai/gonka); voting_powers (field 8, ModelVotingPower
// {model_id = 1, voting_power = 2}) per zpoken/gonka inference-chain/x/inference/types/
// activeparticipants.pb.go@89ff8bdb and the multi-model PoC design. Unknown fields are skipped, so a
// newer chain that adds fields still decodes; a known field with the wrong wire type is
// an error, as it is for the Go decoder (gogoproto's "wrong wireType").

const KEY_PREFIX = 'ActiveParticipants/value/'

/**
 * The store key of an epoch's ActiveParticipants (types.ActiveParticipantsFullKey):
 * "ActiveParticipants/value/", the epoch as 8 big-endian bytes, then "/".
 */
export function activeParticipantsKey (epoch: bigint): Uint8Array {
  const prefix = new TextEncoder().encode(KEY_PREFIX)
  const key = new Uint8Array(prefix.length + 9)
  key.set(prefix)
  new DataView(key.buffer).setBigUint64(prefix.length, BigInt.asUintN(64, epoch))
  key[key.length - 1] = '/'.charCodeAt(0)
  return key
}

export interface MLNodeInfo {
  node_id: string
  throughput: Int64Value
  poc_weight: Int64Value
  timeslot_allocation: boolean[]
}

export interface ModelMLNodes {
  ml_nodes: MLNodeInfo[]
}

export interface RandomSeed {
  participant: string
  epoch_index: Int64Value
  signature: string
}

/** A participant's voting power for one model (multi-model PoC; field 8 of ActiveParticipant). */
export interface ModelVotingPower {
  model_id: string
  voting_power: Int64Value
}

export interface ActiveParticipant {
  index: string
  validator_key: string
  weight: Int64Value
  inference_url: string
  models: string[]
  seed: RandomSeed | null
  ml_nodes: ModelMLNodes[]
  voting_powers: ModelVotingPower[]
}

/**
 * Every field with its proto3 default; the route leaves the empty ones out, as Go's
 * encoding/json of the gogoproto struct (all fields omitempty) does.
 */
export interface ActiveParticipants {
  participants: ActiveParticipant[]
  epoch_group_id: Int64Value
  poc_start_block_height: Int64Value
  effective_block_height: Int64Value
  created_at_block_height: Int64Value
  epoch_id: Int64Value
}

/** Decodes the store value; throws on bytes that are not a valid ActiveParticipants. */
export function decodeActiveParticipants (bytes: Uint8Array): ActiveParticipants {
  const out: ActiveParticipants = {
    participants: [],
    epoch_group_id: 0,
    poc_start_block_height: 0,
    effective_block_height: 0,
    created_at_block_height: 0,
    epoch_id: 0
  }
  readFields(new BinaryReader(bytes), (r, field, type) => {
    switch (field) {
      case 1: out.participants.push(decodeParticipant(message(r, type, field))); return true
      case 2: out.epoch_group_id = uint64(r, type, field); return true
      case 3: out.poc_start_block_height = int64(r, type, field); return true
      case 4: out.effective_block_height = int64(r, type, field); return true
      case 5: out.created_at_block_height = int64(r, type, field); return true
      case 6: out.epoch_id = uint64(r, type, field); return true
      default: return false
    }
  })
  return out
}

function decodeParticipant (r: BinaryReader): ActiveParticipant {
  const p: ActiveParticipant = { index: '', validator_key: '', weight: 0, inference_url: '', models: [], seed: null, ml_nodes: [], voting_powers: [] }
  readFields(r, (r, field, type) => {
    switch (field) {
      case 1: p.index = string(r, type, field); return true
      case 2: p.validator_key = string(r, type, field); return true
      case 3: p.weight = int64(r, type, field); return true
      case 4: p.inference_url = string(r, type, field); return true
      case 5: p.models.push(string(r, type, field)); return true
      case 6: p.seed = decodeSeed(message(r, type, field), p.seed); return true
      case 7: p.ml_nodes.push(decodeModelNodes(message(r, type, field))); return true
      case 8: p.voting_powers.push(decodeVotingPower(message(r, type, field))); return true
      default: return false
    }
  })
  return p
}

// A message field that occurs twice is merged, as protobuf parsers must.
function decodeSeed (r: BinaryReader, previous: RandomSeed | null): RandomSeed {
  const s: RandomSeed = previous ?? { participant: '', epoch_index: 0, signature: '' }
  readFields(r, (r, field, type) => {
    switch (field) {
      case 1: s.participant = string(r, type, field); return true
      case 2: s.epoch_index = uint64(r, type, field); return true
      case 3: s.signature = string(r, type, field); return true
      default: return false
    }
  })
  return s
}

function decodeVotingPower (r: BinaryReader): ModelVotingPower {
  const v: ModelVotingPower = { model_id: '', voting_power: 0 }
  readFields(r, (r, field, type) => {
    switch (field) {
      case 1: v.model_id = string(r, type, field); return true
      case 2: v.voting_power = int64(r, type, field); return true
      default: return false
    }
  })
  return v
}

function decodeModelNodes (r: BinaryReader): ModelMLNodes {
  const m: ModelMLNodes = { ml_nodes: [] }
  readFields(r, (r, field, type) => {
    if (field !== 1) return false
    m.ml_nodes.push(decodeNode(message(r, type, field)))
    return true
  })
  return m
}

function decodeNode (r: BinaryReader): MLNodeInfo {
  const n: MLNodeInfo = { node_id: '', throughput: 0, poc_weight: 0, timeslot_allocation: [] }
  readFields(r, (r, field, type) => {
    switch (field) {
      case 1: n.node_id = string(r, type, field); return true
      case 2: n.throughput = int64(r, type, field); return true
      case 3: n.poc_weight = int64(r, type, field); return true
      case 4: n.timeslot_allocation.push(...bools(r, type, field)); return true
      default: return false
    }
  })
  return n
}

type FieldHandler = (r: BinaryReader, field: number, type: WireType) => boolean

/**
 * Reads every field to the end of `r`; the handler returns false for fields it does not
 * know. Truncated data throws: every BinaryReader read checks its bounds.
 */
function readFields (r: BinaryReader, handle: FieldHandler): void {
  while (r.pos < r.len) {
    const [field, type] = r.tag()
    if (!handle(r, field, type)) r.skip(type, field)
  }
}

function expect (type: WireType, wanted: WireType, field: number): void {
  if (type !== wanted) throw new Error(`proto: wrong wire type ${type} for field ${field}`)
}

function message (r: BinaryReader, type: WireType, field: number): BinaryReader {
  expect(type, WireType.LengthDelimited, field)
  return new BinaryReader(r.bytes())
}

function string (r: BinaryReader, type: WireType, field: number): string {
  expect(type, WireType.LengthDelimited, field)
  return r.string()
}

// BinaryReader gives a bigint (a decimal string where BigInt is missing); BigInt() takes
// either, and exactInteger makes it a number, or a bigint beyond 2^53.
function int64 (r: BinaryReader, type: WireType, field: number): Int64Value {
  expect(type, WireType.Varint, field)
  return exactInteger(BigInt(r.int64()))
}

function uint64 (r: BinaryReader, type: WireType, field: number): Int64Value {
  expect(type, WireType.Varint, field)
  return exactInteger(BigInt(r.uint64()))
}

/** A repeated bool arrives packed (proto3's default) or one value at a time; both are valid. */
function bools (r: BinaryReader, type: WireType, field: number): boolean[] {
  if (type === WireType.Varint) return [r.bool()]
  expect(type, WireType.LengthDelimited, field)
  const packed = new BinaryReader(r.bytes())
  const values: boolean[] = []
  while (packed.pos < packed.len) values.push(packed.bool())
  return values
}
