import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire'
import type { ValidatorSet } from '../cometbft/validator-set.js'
import { merkleRoot } from './merkle.js'

// CometBFT's ValidatorSet.Hash (types/validator_set.go, v0.38): the Merkle root (merkle.ts)
// of each validator's Bytes(), in the set's order (voting power descending, then address:
// newValidatorSet's), each a proto SimpleValidator:
//
//   message SimpleValidator { tendermint.crypto.PublicKey pub_key = 1; int64 voting_power = 2; }
//   message PublicKey { oneof sum { bytes ed25519 = 1; bytes secp256k1 = 2; ... } }
//
// A header's validators_hash and next_validators_hash are this root: it is what ties a set a
// node hands us to a header its validators signed. The proposer priority is not in it.

// A 100-validator set is ~300 SHA-256s to hash (about 10 ms measured on the loaded 2-core
// machine, as much as a third of verifying its commit), and a follower meets the same set at
// every block, as both sets of each header, until an epoch changes it: each set object (a
// ValidatorSet is never changed once built) is hashed once.
const hashes = new WeakMap<ValidatorSet, Uint8Array>()

export function validatorSetHash (set: ValidatorSet): Uint8Array {
  let hash = hashes.get(set)
  if (hash === undefined) {
    hash = hashOf(set)
    hashes.set(set, hash)
  }
  return hash.slice()
}

function hashOf (set: ValidatorSet): Uint8Array {
  return merkleRoot(set.validators.map((v) => {
    const w = new BinaryWriter()
    // Neither field is ever zero here (newValidatorSet refuses power 0 and any key but 32
    // bytes), so proto3's leaving zeros out never applies.
    w.tag(1, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).bytes(v.pubKey).join()
    w.tag(2, WireType.Varint).int64(v.votingPower)
    return w.finish()
  }))
}
