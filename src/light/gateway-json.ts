import { decodeBlockJson } from '../cometbft/block-json.js'
import { parseTimestamp } from '../cometbft/timestamp.js'
import type { BlockId, Commit, Header } from '../cometbft/types.js'
import { newValidatorSet, type ValidatorInput, type ValidatorSet } from '../cometbft/validator-set.js'
import { NamedError } from '../named-error.js'
import { decodeBase64 } from '../wire/go-base64.js'

// What the verified-height cursor (cursor.ts) reads from a node's REST gateway, as CometBFT's
// types: GetLatestBlock / GetBlockByHeight's `block` (protojson: bytes as base64, 64-bit
// integers as strings) gives header H and the commit for H - 1 (its last_commit);
// GetValidatorSetByHeight's pages give a set. Nothing here is trusted: the verifier checks
// every hash and signature; this only refuses what cannot be read, naming the field.

/** A node's answer the cursor cannot read; the node is not believed for it. */
export class LightJsonError extends NamedError {}

/** A gateway block: its header, and the commit for the height below that it carries. */
export interface GatewayBlock {
  readonly header: Header
  /** The commit for header.height - 1 (undefined: the block carries none, as the first one). */
  readonly lastCommit: Commit | undefined
}

type Json = Record<string, unknown>

/** GetBlockByHeight / GetLatestBlock's answer. */
export function gatewayBlock (answer: unknown): GatewayBlock {
  const block = object(object(answer, 'answer').block, 'block')
  const h = object(block.header, 'block.header')
  const version = object(h.version, 'block.header.version')
  const time = typeof h.time === 'string' ? parseTimestamp(h.time) : undefined
  if (time === undefined) throw new LightJsonError('block.header.time: must be an RFC 3339 time')
  const header: Header = {
    version: { block: int(version.block, 'block.header.version.block'), app: int(version.app ?? '0', 'block.header.version.app') },
    chainId: text(h.chain_id, 'block.header.chain_id'),
    height: int(h.height, 'block.header.height'),
    time,
    lastBlockId: blockId(h.last_block_id, 'block.header.last_block_id'),
    lastCommitHash: bytes(h.last_commit_hash, 'block.header.last_commit_hash'),
    dataHash: bytes(h.data_hash, 'block.header.data_hash'),
    validatorsHash: bytes(h.validators_hash, 'block.header.validators_hash'),
    nextValidatorsHash: bytes(h.next_validators_hash, 'block.header.next_validators_hash'),
    consensusHash: bytes(h.consensus_hash, 'block.header.consensus_hash'),
    appHash: bytes(h.app_hash, 'block.header.app_hash'),
    lastResultsHash: bytes(h.last_results_hash, 'block.header.last_results_hash'),
    evidenceHash: bytes(h.evidence_hash, 'block.header.evidence_hash'),
    proposerAddress: bytes(h.proposer_address, 'block.header.proposer_address')
  }
  try {
    return { header, lastCommit: decodeBlockJson(block).lastCommit }
  } catch (err) {
    throw new LightJsonError(`block.${(err as Error).message}`)
  }
}

/** One page of GetValidatorSetByHeight: its validators and the set's total count. */
export interface ValidatorPage {
  readonly validators: readonly ValidatorInput[]
  readonly total: number
}

export function validatorPage (answer: unknown): ValidatorPage {
  const page = object(answer, 'answer')
  if (!Array.isArray(page.validators)) throw new LightJsonError('validators: must be an array')
  const validators = page.validators.map((v: unknown, i) => {
    const validator = object(v, `validators[${i}]`)
    return { pubKey: bytes(object(validator.pub_key, `validators[${i}].pub_key`).key, `validators[${i}].pub_key.key`), votingPower: int(validator.voting_power, `validators[${i}].voting_power`) }
  })
  const total = Number(object(page.pagination, 'pagination').total)
  if (!Number.isSafeInteger(total) || total < 0) throw new LightJsonError('pagination.total: must be a count')
  return { validators, total }
}

/** The set the pages make, refused as CometBFT refuses one (a duplicate, a zero power, a key of the wrong size). */
export function validatorSetOf (inputs: readonly ValidatorInput[]): ValidatorSet {
  try {
    return newValidatorSet(inputs)
  } catch (err) {
    throw new LightJsonError(`validators: ${(err as Error).message}`)
  }
}

function blockId (value: unknown, path: string): BlockId {
  const id = object(value, path)
  const parts = object(id.part_set_header, `${path}.part_set_header`)
  const total = Number(parts.total ?? 0)
  if (!Number.isInteger(total) || total < 0 || total > 2 ** 32 - 1) throw new LightJsonError(`${path}.part_set_header.total: must be a uint32`)
  return { hash: bytes(id.hash, `${path}.hash`), partSetHeader: { total, hash: bytes(parts.hash, `${path}.part_set_header.hash`) } }
}

function object (value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LightJsonError(`${path}: must be an object`)
  return value as Json
}

function text (value: unknown, path: string): string {
  if (typeof value !== 'string') throw new LightJsonError(`${path}: must be a string`)
  return value
}

function int (value: unknown, path: string): bigint {
  if (typeof value === 'string' && /^\d{1,19}$/.test(value)) return BigInt(value)
  throw new LightJsonError(`${path}: must be a decimal string`)
}

/** protojson bytes: base64, empty when absent or null. */
function bytes (value: unknown, path: string): Uint8Array {
  if (value === undefined || value === null) return new Uint8Array()
  const decoded = typeof value === 'string' ? decodeBase64(value) : undefined
  if (decoded === undefined) throw new LightJsonError(`${path}: must be base64`)
  return decoded
}
