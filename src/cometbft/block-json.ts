import { NamedError } from '../named-error.js'
import { decodeBase64 } from '../wire/go-base64.js'
import { decodeHexGo } from '../wire/go-hex.js'
import { parseTimestamp, ZERO_TIME, type Timestamp } from './timestamp.js'
import { BLOCK_ID_FLAG_NAMES, enumByName, type BlockId, type BlockWithCommit, type Commit, type CommitSig } from './types.js'

// A block's header and last commit read from JSON, in either of the two encodings a client
// or the chain gives:
//
// - the chain gateway's protojson (GetBlockByHeight's `sdk_block`/`block`, and the `block`
//   that /v1/epochs/{epoch}/participants returns): bytes as base64, 64-bit integers as
//   strings, `block_id.part_set_header`, enum names for block_id_flag;
// - CometBFT's own JSON (its RPC /block, or Go's encoding/json of types.Block, which is what
//   the Go service's verify-block decoded): hashes and addresses as hex, signatures as
//   base64, `block_id.parts`, block_id_flag as a number.
//
// The part-set key tells them apart (hex and base64 strings can look alike). Integers may be
// JSON numbers or decimal strings in both. Only what commit verification needs is read.

/** A block that cannot be read; the message names the field. */
export class BlockJsonError extends NamedError {}

type Json = Record<string, unknown>
type Encoding = 'protojson' | 'cometbft'

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

export function decodeBlockJson (block: unknown): BlockWithCommit {
  const b = object(block, 'block', false)
  const header = object(b.header, 'header', false)
  if (typeof header.chain_id !== 'string') throw new BlockJsonError('header.chain_id: must be a string')
  const last = object(b.last_commit, 'last_commit', true)
  return {
    chainId: header.chain_id,
    height: int64(header.height, 'header.height'),
    lastCommit: last === undefined ? undefined : decodeCommit(last)
  }
}

function decodeCommit (c: Json): Commit {
  const id = object(c.block_id, 'last_commit.block_id', false)
  const encoding: Encoding = id.part_set_header !== undefined ? 'protojson' : 'cometbft'
  const partsKey = encoding === 'protojson' ? 'part_set_header' : 'parts'
  if (id[partsKey] === undefined) {
    throw new BlockJsonError('last_commit.block_id: needs part_set_header (chain gateway JSON) or parts (CometBFT JSON)')
  }
  const parts = object(id[partsKey], `last_commit.block_id.${partsKey}`, false)
  const blockId: BlockId = {
    hash: hashBytes(id.hash, 'last_commit.block_id.hash', encoding),
    partSetHeader: {
      total: integer(parts.total ?? 0, `last_commit.block_id.${partsKey}.total`, 0, 2 ** 32 - 1),
      hash: hashBytes(parts.hash, `last_commit.block_id.${partsKey}.hash`, encoding)
    }
  }
  const signatures = c.signatures ?? []
  if (!Array.isArray(signatures)) throw new BlockJsonError('last_commit.signatures: must be an array')
  return {
    height: int64(c.height, 'last_commit.height'),
    round: integer(c.round ?? 0, 'last_commit.round', -(2 ** 31), 2 ** 31 - 1),
    blockId,
    signatures: signatures.map((s, i) => decodeSig(s, `last_commit.signatures[${i}]`, encoding))
  }
}

function decodeSig (value: unknown, path: string, encoding: Encoding): CommitSig {
  const s = object(value, path, false)
  return {
    blockIdFlag: flag(s.block_id_flag, `${path}.block_id_flag`),
    validatorAddress: hashBytes(s.validator_address, `${path}.validator_address`, encoding),
    timestamp: timestamp(s.timestamp, `${path}.timestamp`),
    // Signatures are base64 in both: CometBFT's JSON writes []byte as base64.
    signature: base64(s.signature, `${path}.signature`)
  }
}

function object (value: unknown, path: string, optional: true): Json | undefined
function object (value: unknown, path: string, optional: false): Json
function object (value: unknown, path: string, optional: boolean): Json | undefined {
  if ((value === undefined || value === null) && optional) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BlockJsonError(`${path}: must be an object`)
  return value as Json
}

function int64 (value: unknown, path: string): bigint {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value
  if (typeof text === 'string' && /^-?\d{1,19}$/.test(text)) {
    const n = BigInt(text)
    if (n >= INT64_MIN && n <= INT64_MAX) return n
  }
  throw new BlockJsonError(`${path}: must be a 64-bit integer (a JSON number or a decimal string)`)
}

function integer (value: unknown, path: string, min: number, max: number): number {
  const n = typeof value === 'string' && /^-?\d{1,10}$/.test(value) ? Number(value) : value
  if (typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max) return n
  throw new BlockJsonError(`${path}: must be an integer from ${min} to ${max}`)
}

function flag (value: unknown, path: string): number {
  return enumByName(value, BLOCK_ID_FLAG_NAMES) ?? integer(value, path, 0, 255)
}

function timestamp (value: unknown, path: string): Timestamp {
  // Go's zero time.Time, which absent signatures carry, may also come as null.
  if (value === undefined || value === null) return ZERO_TIME
  const parsed = typeof value === 'string' ? parseTimestamp(value) : undefined
  if (parsed === undefined) throw new BlockJsonError(`${path}: must be an RFC 3339 time, e.g. 2026-01-15T10:00:00.123456789Z`)
  return parsed
}

/** A hash or address: base64 in protojson, hex in CometBFT's JSON; empty when null or absent. */
function hashBytes (value: unknown, path: string, encoding: Encoding): Uint8Array {
  if (encoding === 'protojson') return base64(value, path)
  if (value === undefined || value === null) return new Uint8Array()
  if (typeof value === 'string') {
    try {
      return decodeHexGo(value)
    } catch (err) {
      throw new BlockJsonError(`${path}: ${(err as Error).message}`)
    }
  }
  throw new BlockJsonError(`${path}: must be a hex string`)
}

function base64 (value: unknown, path: string): Uint8Array {
  if (value === undefined || value === null) return new Uint8Array()
  const bytes = typeof value === 'string' ? decodeBase64(value) : undefined
  if (bytes === undefined) throw new BlockJsonError(`${path}: must be standard base64`)
  return bytes
}
