import { bech32 } from '@scure/base'
import type { Timestamp } from '../../src/cometbft/timestamp.js'
import type { BlockId, Commit, Header } from '../../src/cometbft/types.js'
import type { ValidatorSet } from '../../src/cometbft/validator-set.js'

// The signed chain (signed-chain.ts) in the JSON the Cosmos SDK's gRPC-gateway writes
// (protojson: 64-bit integers as strings, bytes as base64, enums by name), as
// cosmos.base.tendermint.v1beta1 answers GetLatestBlock / GetBlockByHeight (block_id, the
// CometBFT block with a raw proposer address, and sdk_block with a bech32 one) and
// GetValidatorSetByHeight (pages of at most 100, bech32 consensus addresses).

const FLAG_NAMES = ['BLOCK_ID_FLAG_UNKNOWN', 'BLOCK_ID_FLAG_ABSENT', 'BLOCK_ID_FLAG_COMMIT', 'BLOCK_ID_FLAG_NIL']
const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64')
const valcons = (address: Uint8Array): string => bech32.encode('gonkavalcons', bech32.toWords(address))

/** RFC 3339 with nanoseconds, as protojson writes a Timestamp (Go's zero time as 0001-01-01T00:00:00Z). */
export function rfc3339 (time: Timestamp): string {
  const date = new Date(time.seconds * 1000).toISOString().slice(0, 19)
  return time.nanos === 0 ? `${date}Z` : `${date}.${String(time.nanos).padStart(9, '0').replace(/0+$/, '')}Z`
}

const blockIdJson = (id: BlockId): unknown => ({ hash: b64(id.hash), part_set_header: { total: id.partSetHeader.total, hash: b64(id.partSetHeader.hash) } })

function headerJson (h: Header): Record<string, unknown> {
  return {
    version: { block: String(h.version.block), app: String(h.version.app) },
    chain_id: h.chainId,
    height: String(h.height),
    time: rfc3339(h.time),
    last_block_id: blockIdJson(h.lastBlockId),
    last_commit_hash: b64(h.lastCommitHash),
    data_hash: b64(h.dataHash),
    validators_hash: b64(h.validatorsHash),
    next_validators_hash: b64(h.nextValidatorsHash),
    consensus_hash: b64(h.consensusHash),
    app_hash: b64(h.appHash),
    last_results_hash: b64(h.lastResultsHash),
    evidence_hash: b64(h.evidenceHash)
  }
}

export function commitJson (c: Commit): unknown {
  return {
    height: String(c.height),
    round: c.round,
    block_id: blockIdJson(c.blockId),
    signatures: c.signatures.map((s) => ({
      block_id_flag: FLAG_NAMES[s.blockIdFlag],
      validator_address: b64(s.validatorAddress),
      timestamp: rfc3339(s.timestamp),
      signature: b64(s.signature)
    }))
  }
}

/** GetBlockByHeight's answer: block `header` (ID `blockId`) with `lastCommit`, the commit for the block before. */
export function blockJson (header: Header, blockId: BlockId, lastCommit: Commit): unknown {
  const body = { data: { txs: [] }, evidence: { evidence: [] }, last_commit: commitJson(lastCommit) }
  const fields = headerJson(header)
  return {
    block_id: blockIdJson(blockId),
    block: { header: { ...fields, proposer_address: b64(header.proposerAddress) }, ...body },
    sdk_block: { header: { ...fields, proposer_address: valcons(header.proposerAddress) }, ...body }
  }
}

/** GetValidatorSetByHeight's answer: a page of at most 100 (CometBFT's cap), from pagination.offset. */
export function validatorSetJson (height: number, set: ValidatorSet, url: URL): unknown {
  const limit = Math.min(Number(url.searchParams.get('pagination.limit') ?? 100) || 100, 100)
  const offset = Number(url.searchParams.get('pagination.offset') ?? 0) || 0
  return {
    block_height: String(height),
    validators: set.validators.slice(offset, offset + limit).map((v) => ({
      address: valcons(v.address),
      pub_key: { '@type': '/cosmos.crypto.ed25519.PubKey', key: b64(v.pubKey) },
      voting_power: String(v.votingPower),
      proposer_priority: '0'
    })),
    pagination: { next_key: null, total: String(set.validators.length) }
  }
}
