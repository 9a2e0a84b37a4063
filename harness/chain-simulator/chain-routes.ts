import type { Commit, Header } from '../../src/cometbft/types.js'
import { blockJson, rfc3339, validatorSetJson } from './chain-json.js'
import { forgedAppHash, type Lies } from './lies.js'
import { GatewayError, RpcError, type SimHeights } from './route.js'
import type { SignedChain } from './signed-chain.js'

// A node's answers from the signed chain (signed-chain.ts), with its lies (lies.ts): the
// blocks and validator sets of cosmos.base.tendermint.v1beta1, as edge-api's head poll and a
// light client read them, and CometBFT RPC's /commit?height= (the signed header with the
// commit for its own height, which the REST block of the height above carries only later)
// and /validators?height=&page=&per_page= (CometBFT 0.38's JSON-RPC over GET, rpc/core:
// {"jsonrpc":"2.0","id":-1,"result":…}, an error as status 500 with its `error`). A real node
// serves its RPC on another port (26657); here one server answers both.
// Blocks before the chain's first height + 1 are not available, as on a pruned node (the
// first block's last commit is not the chain's).

const BLOCK = /^\/cosmos\/base\/tendermint\/v1beta1\/blocks\/(latest|-?\d+)$/
const VALIDATOR_SET = /^\/cosmos\/base\/tendermint\/v1beta1\/validatorsets\/(latest|-?\d+)$/

/** The answer to `pathname` from `chain` as a node lying with `lies` serves it; undefined when the path is not the chain's. */
export function chainAnswer (chain: SignedChain, lies: Lies, pathname: string, url: URL, heights: SimHeights): unknown {
  const block = BLOCK.exec(pathname)
  if (block !== null) {
    const height = heightOf(block[1] as string, chain, heights)
    if (height instanceof GatewayError) return height
    const { header, blockId } = chain.block(height, lies.forkFrom)
    return blockJson(told(header, lies), blockId, chain.block(height - 1, lies.forkFrom).commit)
  }
  const set = VALIDATOR_SET.exec(pathname)
  if (set !== null) {
    const height = heightOf(set[1] as string, chain, heights)
    return height instanceof GatewayError ? height : validatorSetJson(height, chain.validatorSet(height), url)
  }
  if (pathname === '/commit') return rpcCommit(chain, lies, url, heights)
  if (pathname === '/validators') return rpcValidators(chain, url, heights)
  return undefined
}

/** The header as the node tells it: with a forged app hash from lies.forgedAppHashFrom on, the commit unchanged. */
function told (header: Header, lies: Lies): Header {
  if (lies.forgedAppHashFrom === undefined || Number(header.height) < lies.forgedAppHashFrom) return header
  return { ...header, appHash: forgedAppHash(header.appHash) }
}

function heightOf (text: string, chain: SignedChain, { head, lowest }: SimHeights): number | GatewayError {
  if (text === 'latest') return head
  const height = Number(text)
  if (height < 1) return new GatewayError(3, 'height must be greater than 0')
  if (height > head) return new GatewayError(3, `requested block height ${text} is bigger than the chain length ${head}`)
  const first = Math.max(lowest, chain.firstHeight + 1)
  // CometBFT's own words for a pruned block store, passed on as an unknown error.
  if (height < first) return new GatewayError(2, `height ${height} is not available, lowest height is ${first}`, 500)
  return height
}

/** CometBFT RPC /commit: JSON-RPC, CometBFT's own JSON (hex hashes); canonical once the block above has it. */
function rpcCommit (chain: SignedChain, lies: Lies, url: URL, heights: SimHeights): unknown {
  const height = rpcHeightOf(url, heights.head, chain, heights)
  if (height instanceof RpcError) return height
  const { header, commit } = chain.block(height, lies.forkFrom)
  return { jsonrpc: '2.0', id: -1, result: { signed_header: { header: cometHeader(told(header, lies)), commit: cometCommit(commit) }, canonical: height < heights.head } }
}

/**
 * CometBFT RPC /validators (rpc/core/consensus.go): the set at a height up to the head + 1 (the
 * next set is known once the head is committed), `per_page` of them (30 by default, 100 at
 * most) from 1-based `page`, its count and the set's total as decimal strings (cmtjson).
 */
function rpcValidators (chain: SignedChain, url: URL, heights: SimHeights): unknown {
  const height = rpcHeightOf(url, heights.head + 1, chain, heights)
  if (height instanceof RpcError) return height
  const set = chain.validatorSet(height).validators
  const perPage = Math.min(Math.max(Number(url.searchParams.get('per_page') ?? 30) || 30, 1), 100)
  const pages = Math.max(1, Math.ceil(set.length / perPage))
  const page = Number(url.searchParams.get('page') ?? 1)
  if (!Number.isInteger(page) || page < 1 || page > pages) return new RpcError(`page should be within [1, ${pages}] range, given ${page}`)
  const validators = set.slice((page - 1) * perPage, page * perPage).map((v) => ({
    address: hex(v.address),
    pub_key: { type: 'tendermint/PubKeyEd25519', value: Buffer.from(v.pubKey).toString('base64') },
    voting_power: String(v.votingPower),
    proposer_priority: '0'
  }))
  return { jsonrpc: '2.0', id: -1, result: { block_height: String(height), validators, count: String(validators.length), total: String(set.length) } }
}

/** The `height` parameter of an RPC call answered up to `latest` (its default), refused in CometBFT's words (rpc/core/env.go, getHeight). */
function rpcHeightOf (url: URL, latest: number, chain: SignedChain, { lowest }: SimHeights): number | RpcError {
  const text = url.searchParams.get('height')
  if (text === null) return latest
  const height = Number(text)
  if (!Number.isSafeInteger(height)) return new RpcError(`error converting http params to arguments: ${JSON.stringify(text)} is not an integer`)
  if (height <= 0) return new RpcError(`height must be greater than 0, but got ${height}`)
  if (height > latest) return new RpcError(`height ${height} must be less than or equal to the current blockchain height ${latest}`)
  const base = Math.max(lowest, chain.firstHeight + 1)
  if (height < base) return new RpcError(`height ${height} is not available, lowest height is ${base}`)
  return height
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex').toUpperCase()
const cometBlockId = (id: Commit['blockId']): unknown => ({ hash: hex(id.hash), parts: { total: id.partSetHeader.total, hash: hex(id.partSetHeader.hash) } })

function cometHeader (h: Header): unknown {
  return {
    version: { block: String(h.version.block), app: String(h.version.app) },
    chain_id: h.chainId,
    height: String(h.height),
    time: rfc3339(h.time),
    last_block_id: cometBlockId(h.lastBlockId),
    last_commit_hash: hex(h.lastCommitHash),
    data_hash: hex(h.dataHash),
    validators_hash: hex(h.validatorsHash),
    next_validators_hash: hex(h.nextValidatorsHash),
    consensus_hash: hex(h.consensusHash),
    app_hash: hex(h.appHash),
    last_results_hash: hex(h.lastResultsHash),
    evidence_hash: hex(h.evidenceHash),
    proposer_address: hex(h.proposerAddress)
  }
}

function cometCommit (c: Commit): unknown {
  return {
    height: String(c.height),
    round: c.round,
    block_id: cometBlockId(c.blockId),
    signatures: c.signatures.map((s) => ({
      block_id_flag: s.blockIdFlag,
      validator_address: hex(s.validatorAddress),
      timestamp: rfc3339(s.timestamp),
      signature: s.signature.length === 0 ? null : Buffer.from(s.signature).toString('base64')
    }))
  }
}
