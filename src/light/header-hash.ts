import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire'
import type { Timestamp } from '../cometbft/timestamp.js'
import type { BlockId, Header } from '../cometbft/types.js'
import { merkleRoot } from './merkle.js'

// CometBFT's Header.Hash (types/block.go, v0.38): the Merkle root (merkle.ts) of the header's
// fields, each protobuf-encoded on its own, in the order of the proto message:
//
//   Version            tendermint.version.Consensus {uint64 block = 1; uint64 app = 2}
//   ChainID            cdcEncode: google.protobuf.StringValue {string value = 1}
//   Height             cdcEncode: google.protobuf.Int64Value {int64 value = 1}
//   Time               google.protobuf.Timestamp {int64 seconds = 1; int32 nanos = 2}
//   LastBlockID        tendermint.types.BlockID {bytes hash = 1; PartSetHeader part_set_header = 2}
//   LastCommitHash … ProposerAddress (nine of them)
//                      cdcEncode: google.protobuf.BytesValue {bytes value = 1}
//
// proto3 leaves zero scalars out, so a wrapper of an empty string, 0 or no bytes is empty
// (cdcEncode also returns nil for Go's zero values: the same empty leaf). gogoproto writes a
// non-nullable embedded message always, so a BlockID's part_set_header is there even when
// empty (an empty BlockID is 12 00). Checked against tendermint-rs's light-client vectors,
// where every commit's block ID names the hash of its header (test/light/header-hash.test.ts).

/** The header's hash, or undefined when it has no validators hash (Go returns nil: nothing can sign it). */
export function headerHash (header: Header): Uint8Array | undefined {
  if (header.validatorsHash.length === 0) return undefined
  return merkleRoot(headerFieldBytes(header))
}

/** The header's fields as the leaves of its hash, in order. */
export function headerFieldBytes (header: Header): Uint8Array[] {
  return [
    consensusVersionBytes(header.version.block, header.version.app),
    stringValueBytes(header.chainId),
    int64ValueBytes(header.height),
    timestampBytes(header.time),
    blockIdBytes(header.lastBlockId),
    ...[
      header.lastCommitHash, header.dataHash, header.validatorsHash, header.nextValidatorsHash, header.consensusHash,
      header.appHash, header.lastResultsHash, header.evidenceHash, header.proposerAddress
    ].map(bytesValueBytes)
  ]
}

function consensusVersionBytes (block: bigint, app: bigint): Uint8Array {
  const w = new BinaryWriter()
  if (block !== 0n) w.tag(1, WireType.Varint).uint64(block)
  if (app !== 0n) w.tag(2, WireType.Varint).uint64(app)
  return w.finish()
}

function stringValueBytes (value: string): Uint8Array {
  const w = new BinaryWriter()
  if (value !== '') w.tag(1, WireType.LengthDelimited).string(value)
  return w.finish()
}

function int64ValueBytes (value: bigint): Uint8Array {
  const w = new BinaryWriter()
  if (value !== 0n) w.tag(1, WireType.Varint).int64(value)
  return w.finish()
}

function bytesValueBytes (value: Uint8Array): Uint8Array {
  const w = new BinaryWriter()
  if (value.length > 0) w.tag(1, WireType.LengthDelimited).bytes(value)
  return w.finish()
}

export function timestampBytes (time: Timestamp): Uint8Array {
  const w = new BinaryWriter()
  if (time.seconds !== 0) w.tag(1, WireType.Varint).int64(time.seconds)
  if (time.nanos !== 0) w.tag(2, WireType.Varint).int32(time.nanos)
  return w.finish()
}

function blockIdBytes ({ hash, partSetHeader }: BlockId): Uint8Array {
  const w = new BinaryWriter()
  if (hash.length > 0) w.tag(1, WireType.LengthDelimited).bytes(hash)
  w.tag(2, WireType.LengthDelimited).fork()
  if (partSetHeader.total !== 0) w.tag(1, WireType.Varint).uint32(partSetHeader.total)
  if (partSetHeader.hash.length > 0) w.tag(2, WireType.LengthDelimited).bytes(partSetHeader.hash)
  w.join()
  return w.finish()
}
