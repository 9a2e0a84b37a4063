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
  const block = jsonObject(jsonObject(answer, 'answer').block, 'block')
  const header = headerOf(block.header, 'block.header', 'protojson')
  try {
    return { header, lastCommit: decodeBlockJson(block).lastCommit }
  } catch (err) {
    throw new LightJsonError(`block.${(err as Error).message}`)
  }
}

/**
 * How bytes are written: the gateway's protojson (base64, `part_set_header`) or CometBFT's
 * own JSON, which its RPC writes (hashes and addresses as hex, `parts`: rpc-light-json.ts).
 */
export type LightJsonEncoding = 'protojson' | 'cometbft'

/** A header in either encoding; every field read, none defaulted but the app version (0, as Go's zero). */
export function headerOf (value: unknown, path: string, encoding: LightJsonEncoding): Header {
  const h = jsonObject(value, path)
  const version = jsonObject(h.version, `${path}.version`)
  const time = typeof h.time === 'string' ? parseTimestamp(h.time) : undefined
  if (time === undefined) throw new LightJsonError(`${path}.time: must be an RFC 3339 time`)
  const b = (field: string): Uint8Array => bytes(h[field], `${path}.${field}`, encoding)
  return {
    version: { block: decimal(version.block, `${path}.version.block`), app: decimal(version.app ?? '0', `${path}.version.app`) },
    chainId: text(h.chain_id, `${path}.chain_id`),
    height: decimal(h.height, `${path}.height`),
    time,
    lastBlockId: blockId(h.last_block_id, `${path}.last_block_id`, encoding),
    lastCommitHash: b('last_commit_hash'),
    dataHash: b('data_hash'),
    validatorsHash: b('validators_hash'),
    nextValidatorsHash: b('next_validators_hash'),
    consensusHash: b('consensus_hash'),
    appHash: b('app_hash'),
    lastResultsHash: b('last_results_hash'),
    evidenceHash: b('evidence_hash'),
    proposerAddress: b('proposer_address')
  }
}

/** One page of GetValidatorSetByHeight: its validators and the set's total count. */
export interface ValidatorPage {
  readonly validators: readonly ValidatorInput[]
  readonly total: number
}

export function validatorPage (answer: unknown): ValidatorPage {
  const page = jsonObject(answer, 'answer')
  if (!Array.isArray(page.validators)) throw new LightJsonError('validators: must be an array')
  const validators = page.validators.map((v: unknown, i) => {
    const validator = jsonObject(v, `validators[${i}]`)
    return { pubKey: bytes(jsonObject(validator.pub_key, `validators[${i}].pub_key`).key, `validators[${i}].pub_key.key`, 'protojson'), votingPower: decimal(validator.voting_power, `validators[${i}].voting_power`) }
  })
  return { validators, total: count(jsonObject(page.pagination, 'pagination').total, 'pagination.total') }
}

/** The set the pages make, refused as CometBFT refuses one (a duplicate, a zero power, a key of the wrong size). */
export function validatorSetOf (inputs: readonly ValidatorInput[]): ValidatorSet {
  try {
    return newValidatorSet(inputs)
  } catch (err) {
    throw new LightJsonError(`validators: ${(err as Error).message}`)
  }
}

function blockId (value: unknown, path: string, encoding: LightJsonEncoding): BlockId {
  const id = jsonObject(value, path)
  const partsKey = encoding === 'protojson' ? 'part_set_header' : 'parts'
  const parts = jsonObject(id[partsKey], `${path}.${partsKey}`)
  const total = Number(parts.total ?? 0)
  if (!Number.isInteger(total) || total < 0 || total > 2 ** 32 - 1) throw new LightJsonError(`${path}.${partsKey}.total: must be a uint32`)
  return { hash: bytes(id.hash, `${path}.hash`, encoding), partSetHeader: { total, hash: bytes(parts.hash, `${path}.${partsKey}.hash`, encoding) } }
}

export function jsonObject (value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LightJsonError(`${path}: must be an object`)
  return value as Json
}

function text (value: unknown, path: string): string {
  if (typeof value !== 'string') throw new LightJsonError(`${path}: must be a string`)
  return value
}

/** A 64-bit integer as both JSONs write it: a decimal string. */
export function decimal (value: unknown, path: string): bigint {
  if (typeof value === 'string' && /^\d{1,19}$/.test(value)) return BigInt(value)
  throw new LightJsonError(`${path}: must be a decimal string`)
}

/** A count (a page's total), a decimal string or a number. */
export function count (value: unknown, path: string): number {
  const n = typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new LightJsonError(`${path}: must be a count`)
  return n
}

/** Bytes: base64 (protojson) or hex (CometBFT's JSON); empty when absent or null. */
export function bytes (value: unknown, path: string, encoding: LightJsonEncoding): Uint8Array {
  if (value === undefined || value === null) return new Uint8Array()
  const decoded = typeof value !== 'string' ? undefined : encoding === 'protojson' ? decodeBase64(value) : hexBytes(value)
  if (decoded === undefined) throw new LightJsonError(`${path}: must be ${encoding === 'protojson' ? 'base64' : 'hex'}`)
  return decoded
}

function hexBytes (text: string): Uint8Array | undefined {
  return /^(?:[0-9A-Fa-f]{2})*$/.test(text) ? Buffer.from(text, 'hex') : undefined
}
