import { Type, type Static } from 'typebox'
import { consensusAddressBytes } from './address.js'
import { cometBlockFromGateway, InvalidBlockError } from './block-from-proto.js'
import { BlockID, CommitSig, Header } from './comet-json-schema.js'

// What a light client reads from a CometBFT node's RPC, built from the chain gateway's
// answers (/v1/light/…, docs/verified-reads.md "Bundles"): the `result` of RPC `/commit`
// (a signed header: the header at H with the commit for H) and of RPC `/validators` (the
// set at H). CometBFT writes them with its own JSON (cmtjson, rpc/core/types): 64-bit
// integers as decimal strings, hashes and addresses as upper-case hex, signatures and keys
// as base64, a key as `{type, value}` by its amino name. That is the shape tendermint-rs's
// light client (`tendermint-rpc`'s `commit::Response` and `validators::Response`) and
// CosmJS's `Tendermint37Client.commit()` / `validators()` parse, and the simulator's own
// RPC `/commit` writes (harness/chain-simulator/chain-routes.ts).

const DecimalInt = (description: string): ReturnType<typeof Type.String> =>
  Type.String({ pattern: '^-?[0-9]{1,19}$', description: `${description}: a decimal string (CometBFT's JSON writes int64 so)` })

export const RpcHeader = Type.Object({
  ...Header.properties,
  version: Type.Object({ block: DecimalInt('block protocol'), app: DecimalInt('app version') }),
  height: DecimalInt('height')
})

export const RpcCommit = Type.Object({
  height: DecimalInt('height'),
  round: Type.Integer({ format: 'int32' }),
  block_id: BlockID,
  signatures: Type.Array(CommitSig)
})

export const RpcSignedHeader = Type.Object({
  signed_header: Type.Object({ header: RpcHeader, commit: RpcCommit }),
  canonical: Type.Boolean({ description: 'true: the commit is the one the block above carries (as RPC /commit for a height below its head)' })
}, { description: 'the result of CometBFT RPC /commit?height=H: header H and the commit that signs it' })

export const RpcValidator = Type.Object({
  address: Type.String({ description: 'consensus address: upper-case hex' }),
  pub_key: Type.Object({ type: Type.Literal('tendermint/PubKeyEd25519'), value: Type.String({ description: 'base64' }) }),
  voting_power: DecimalInt('voting power'),
  proposer_priority: Type.Optional(DecimalInt('proposer priority, when the node gave one'))
})

export const RpcValidators = Type.Object({
  block_height: DecimalInt('height'),
  validators: Type.Array(RpcValidator),
  count: DecimalInt('validators in this answer'),
  total: DecimalInt('validators in the set')
}, { description: 'the result of CometBFT RPC /validators?height=H with every page: the set that signs block H, in its order' })

/** A validator as the gateway's set gives it (src/chain/consensus.ts reads every page). */
export interface RpcValidatorInput {
  readonly pubKey: Uint8Array
  readonly votingPower: bigint
  readonly proposerPriority?: bigint
}

export type RpcSignedHeaderJson = Static<typeof RpcSignedHeader>
export type RpcValidatorsJson = Static<typeof RpcValidators>

/**
 * The signed header at H from the gateway's `block` at H (tendermint.types.Block in
 * protojson) and at H + 1, whose last_commit signs H. Throws InvalidBlockError for a block
 * CometBFT would refuse, and when the block above carries no commit or one for another height.
 */
export function rpcSignedHeader (block: unknown, above: unknown): RpcSignedHeaderJson {
  const { header } = cometBlockFromGateway(block)
  const commit = cometBlockFromGateway(above).last_commit
  if (commit === null || String(commit.height) !== String(header.height)) {
    throw new InvalidBlockError(`the block above height ${header.height} carries ${commit === null ? 'no commit' : `the commit for height ${commit.height}`}`)
  }
  return {
    signed_header: {
      // The block protocol is never 0 here: cometBlockFromGateway refuses any but 11.
      header: { ...header, version: { block: String(header.version.block), app: String(header.version.app ?? 0) }, height: String(header.height) },
      commit: { ...commit, height: String(commit.height) }
    },
    canonical: true
  }
}

/** The set at `height` as RPC /validators writes it, every validator in one answer. */
export function rpcValidators (height: bigint, set: readonly RpcValidatorInput[]): RpcValidatorsJson {
  return {
    block_height: String(height),
    validators: set.map((v) => ({
      address: Buffer.from(consensusAddressBytes(v.pubKey)).toString('hex').toUpperCase(),
      pub_key: { type: 'tendermint/PubKeyEd25519' as const, value: Buffer.from(v.pubKey).toString('base64') },
      voting_power: String(v.votingPower),
      ...(v.proposerPriority === undefined ? {} : { proposer_priority: String(v.proposerPriority) })
    })),
    count: String(set.length),
    total: String(set.length)
  }
}
