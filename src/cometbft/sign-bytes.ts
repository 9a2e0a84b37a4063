import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire'
import type { Timestamp } from './timestamp.js'
import { isZeroBlockId, SignedMsgType, type BlockId } from './types.js'

// What a CometBFT validator signs for a vote (types.VoteSignBytes): a CanonicalVote,
// protobuf-encoded as gogoproto marshals it and prefixed with its uvarint length.
//
//   message CanonicalVote {
//     SignedMsgType             type      = 1;  // varint; 2 = precommit
//     sfixed64                  height    = 2;
//     sfixed64                  round     = 3;
//     CanonicalBlockID          block_id  = 4;  // absent for a nil vote
//     google.protobuf.Timestamp timestamp = 5;  // non-nullable: always written, even empty
//     string                    chain_id  = 6;
//   }
//   message CanonicalBlockID { bytes hash = 1; CanonicalPartSetHeader part_set_header = 2 (non-nullable); }
//   message CanonicalPartSetHeader { uint32 total = 1; bytes hash = 2; }
//
// proto3 leaves zero scalars out (a round-0 vote has no round field). Checked against
// CometBFT's TestVoteSignBytesTestVectors and a real commit in test/cometbft/sign-bytes.test.ts.

export const PRECOMMIT_TYPE = SignedMsgType.Precommit

export interface CanonicalVote {
  readonly type: number
  readonly height: bigint
  readonly round: number
  /** undefined for a vote for nil (CometBFT canonicalizes a zero BlockID to none). */
  readonly blockId: BlockId | undefined
  readonly timestamp: Timestamp
  readonly chainId: string
}

export function voteSignBytes (vote: CanonicalVote): Uint8Array {
  const w = new BinaryWriter()
  if (vote.type !== 0) w.tag(1, WireType.Varint).int32(vote.type)
  if (vote.height !== 0n) w.tag(2, WireType.Bit64).sfixed64(vote.height)
  if (vote.round !== 0) w.tag(3, WireType.Bit64).sfixed64(vote.round)
  if (vote.blockId !== undefined && !isZeroBlockId(vote.blockId)) {
    const { hash, partSetHeader } = vote.blockId
    w.tag(4, WireType.LengthDelimited).fork()
    if (hash.length > 0) w.tag(1, WireType.LengthDelimited).bytes(hash)
    w.tag(2, WireType.LengthDelimited).fork()
    if (partSetHeader.total !== 0) w.tag(1, WireType.Varint).uint32(partSetHeader.total)
    if (partSetHeader.hash.length > 0) w.tag(2, WireType.LengthDelimited).bytes(partSetHeader.hash)
    w.join().join()
  }
  w.tag(5, WireType.LengthDelimited).fork()
  if (vote.timestamp.seconds !== 0) w.tag(1, WireType.Varint).int64(vote.timestamp.seconds)
  if (vote.timestamp.nanos !== 0) w.tag(2, WireType.Varint).int32(vote.timestamp.nanos)
  w.join()
  if (vote.chainId !== '') w.tag(6, WireType.LengthDelimited).string(vote.chainId)
  const message = w.finish()
  return new BinaryWriter().bytes(message).finish()
}
