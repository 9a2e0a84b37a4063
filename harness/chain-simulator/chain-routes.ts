import type { Commit, Header } from '../../src/cometbft/types.js'
import { blockJson, rfc3339, validatorSetJson } from './chain-json.js'
import { forgedAppHash, type Lies } from './lies.js'
import { GatewayError, type SimHeights } from './route.js'
import type { SignedChain } from './signed-chain.js'

// A node's answers from the signed chain (signed-chain.ts), with its lies (lies.ts): the
// blocks and validator sets of cosmos.base.tendermint.v1beta1, as edge-api's head poll and a
// light client read them, and CometBFT RPC's /commit?height= (the signed header with the
// commit for its own height, which the REST block of the height above carries only later).
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
  const height = heightOf(url.searchParams.get('height') ?? 'latest', chain, heights)
  if (height instanceof GatewayError) return { jsonrpc: '2.0', id: -1, error: { code: -32603, message: 'Internal error', data: height.message } }
  const { header, commit } = chain.block(height, lies.forkFrom)
  return { jsonrpc: '2.0', id: -1, result: { signed_header: { header: cometHeader(told(header, lies)), commit: cometCommit(commit) }, canonical: height < heights.head } }
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
