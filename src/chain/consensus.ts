import { decodeBase64 } from '../wire/go-base64.js'
import type { ChainClient } from './client.js'
import { chainPath } from './paths.js'
import type { ChainReader, ReadContext } from './types.js'

// CometBFT's consensus data at a height, through the chain's REST gateway
// (cosmos.base.tendermint.v1beta1): the block, and the validator set in full.
//
// The gateway serves a validator set a page at a time: CometBFT caps a page at 100, the
// gateway's default. The Go service asked once and so saw at most 100 validators; a set
// larger than that then failed verification ("wrong set size"). Here the first page says
// how many there are (pagination.total), and the other pages are read together.

const PAGE = 100
/** Far beyond any CometBFT network (the largest run a few hundred validators). */
const MAX_VALIDATORS = 10_000
const ED25519_TYPE = '/cosmos.crypto.ed25519.PubKey'

export interface ConsensusValidator {
  readonly pubKey: Uint8Array
  readonly votingPower: bigint
  /** The node's proposer priority, when it gave one (not part of the set's hash: light clients read it, never verify it). */
  readonly proposerPriority?: bigint
}

interface GatewayBlock {
  block?: unknown
  sdk_block?: unknown
}

interface GatewayValidatorSet {
  validators?: Array<{ pub_key?: { '@type'?: string, key?: string } | null, voting_power?: string, proposer_priority?: string }>
  pagination?: { total?: string } | null
}

// These are the optional verify routes' heavy reads: never hedged (chain.unhedged), so
// that a client asking for verifications cannot double their cost to the chain; `context`'s
// request's (its trace, its client's turn in the read queue).

/** The block at `height` as the gateway encodes it (sdk_block, or block from an older SDK). */
export async function readBlock (chain: ChainClient, height: bigint, context?: ReadContext): Promise<unknown> {
  const answer = await chain.unhedged(context).get(chainPath`/cosmos/base/tendermint/v1beta1/blocks/${height}`) as GatewayBlock
  return answer.sdk_block ?? answer.block
}

/** Every validator of the set at `height`, in the gateway's order. Malformed data throws (a 500). */
export async function readValidatorSet (chain: ChainClient, height: bigint, context?: ReadContext): Promise<ConsensusValidator[]> {
  return await validatorSetFrom(chain.unhedged(context), height)
}

/** Every validator of the set at `height`, read with `reader` (a route's own: /v1/light/validators' is cached by height). */
export async function validatorSetFrom (reader: ChainReader, height: bigint): Promise<ConsensusValidator[]> {
  const path = chainPath`/cosmos/base/tendermint/v1beta1/validatorsets/${height}`
  const page = (offset: number): Promise<GatewayValidatorSet> =>
    reader.get(path, { 'pagination.offset': String(offset), 'pagination.limit': String(PAGE) }) as Promise<GatewayValidatorSet>

  const first = await page(0)
  const validators = [...first.validators ?? []]
  const claimed = first.pagination?.total ?? String(validators.length)
  const total = Number(claimed)
  if (!/^\d{1,6}$/.test(claimed) || total > MAX_VALIDATORS) {
    throw new Error(`the validator set at height ${height} claims ${claimed} validators`)
  }
  const offsets: number[] = []
  for (let offset = PAGE; offset < total; offset += PAGE) offsets.push(offset)
  for (const rest of await Promise.all(offsets.map(page))) validators.push(...rest.validators ?? [])
  if (validators.length !== total) {
    throw new Error(`the validator set at height ${height} has ${total} validators, but its pages held ${validators.length}`)
  }
  return validators.map((v, i) => {
    const type = v.pub_key?.['@type']
    const key = decodeBase64(v.pub_key?.key ?? '')
    if (type !== ED25519_TYPE || key === undefined) {
      throw new Error(`validator #${i} at height ${height} has a ${type ?? 'missing'} key; only ${ED25519_TYPE} is supported`)
    }
    if (!/^\d{1,19}$/.test(v.voting_power ?? '')) throw new Error(`validator #${i} at height ${height} has voting power ${JSON.stringify(v.voting_power)}`)
    const priority = v.proposer_priority
    if (priority !== undefined && !/^-?\d{1,19}$/.test(priority)) throw new Error(`validator #${i} at height ${height} has proposer priority ${JSON.stringify(priority)}`)
    return { pubKey: key, votingPower: BigInt(v.voting_power as string), ...(priority === undefined ? {} : { proposerPriority: BigInt(priority) }) }
  })
}
