import { blockIdProblem, commitProblem, hashProblem, headerProblem } from '../cometbft/validate-basic.js'
import type { Header, SignedHeader } from '../cometbft/types.js'
import { headerHash } from './header-hash.js'

// CometBFT's SignedHeader.ValidateBasic(chainID) (types/block.go, v0.38), which the light
// client runs on every untrusted header before anything else: the header and commit well
// formed (validate-basic.ts's checks), the chain the one trusted, the commit for this
// header's height, and — what makes the signatures mean anything — the commit's block ID
// naming this header's hash. Each answers why, in CometBFT's words, or undefined.

export function signedHeaderProblem ({ header, commit }: SignedHeader, chainId: string): string | undefined {
  const headerWrong = headerBasicProblem(header)
  if (headerWrong !== undefined) return `invalid header: ${headerWrong}`
  const commitWrong = commitProblem(commit)
  if (commitWrong !== undefined) return `invalid commit: ${commitWrong}`
  if (header.chainId !== chainId) return `header belongs to another chain ${JSON.stringify(header.chainId)}, not ${JSON.stringify(chainId)}`
  if (commit.height !== header.height) return `header and commit height mismatch: ${header.height} vs ${commit.height}`
  const hash = headerHash(header) ?? new Uint8Array()
  if (Buffer.compare(hash, commit.blockId.hash) !== 0) return `commit signs block ${hex(commit.blockId.hash)}, header is block ${hex(hash)}`
  return undefined
}

/** Header.ValidateBasic: the basics, the last block ID, and every hash but the app hash (any length) empty or 32 bytes. */
function headerBasicProblem (header: Header): string | undefined {
  const basics = headerProblem({ blockProtocol: header.version.block, chainId: header.chainId, height: header.height, proposerAddress: header.proposerAddress })
  if (basics !== undefined) return basics
  const lastBlockId = blockIdProblem(header.lastBlockId)
  if (lastBlockId !== undefined) return `wrong LastBlockID: ${lastBlockId}`
  const hashes = {
    LastCommitHash: header.lastCommitHash,
    DataHash: header.dataHash,
    EvidenceHash: header.evidenceHash,
    ValidatorsHash: header.validatorsHash,
    NextValidatorsHash: header.nextValidatorsHash,
    ConsensusHash: header.consensusHash,
    LastResultsHash: header.lastResultsHash
  }
  for (const [name, hash] of Object.entries(hashes)) {
    const problem = hashProblem(hash)
    if (problem !== undefined) return `wrong ${name}: ${problem}`
  }
  return undefined
}

function hex (bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').toUpperCase()
}
