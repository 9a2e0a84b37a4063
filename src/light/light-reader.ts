import type { SignedHeader } from '../cometbft/types.js'
import type { ValidatorInput, ValidatorSet } from '../cometbft/validator-set.js'
import type { FetchLightBlock } from './bisection.js'
import { gatewayBlock, LightJsonError, validatorPage, validatorSetOf, type GatewayBlock, type ValidatorPage } from './gateway-json.js'
import type { LightBlock } from './light-block.js'
import { rpcSignedHeader, rpcValidatorPage } from './rpc-light-json.js'
import { validatorSetHash } from './validator-set-hash.js'

// The cursor's reads from one node (cursor.ts): signed headers by height, and the validator
// sets they name. From the node's REST gateway, a header's commit is the block above's
// last_commit; from its CometBFT RPC (EDGE_API_CHAIN_RPC_URL), /commit gives a header with
// its own commit, the head's included (the commit the node has seen, which no block carries
// yet), and /validators the sets. A set is fetched only when a header names one not met
// before (gonka changes its set at epochs): sets are kept by their hash, whichever way they
// came, and only a set that hashes to the hash it was fetched for is kept, so a node handing
// over a wrong set poisons nothing (the verifier refuses it for that block).

/** GETs a gateway path from node `node` (its index), under the chain client's budget; rejects when it cannot. */
export type NodeGet = (node: number, path: string) => Promise<unknown>

/** Where a node's signed headers and sets are read: its RPC (when it has one) or its gateway. */
export type LightSource = 'rpc' | 'gateway'

/** The nodes' CometBFT RPC endpoints: which nodes have one, and a GET of a path that resolves with the JSON-RPC result. */
export interface NodeRpc {
  readonly has: (node: number) => boolean
  readonly get: NodeGet
}

const BLOCKS = '/cosmos/base/tendermint/v1beta1/blocks'
const VALIDATOR_SETS = '/cosmos/base/tendermint/v1beta1/validatorsets'
/** CometBFT's largest page of /validators. */
const RPC_PER_PAGE = 100
/** Sets kept by hash: the current one, the next, and a few before (a bisection after a gap meets several). */
export const KEPT_SETS = 8
/** gonka's max_validators is 100: a set of more than this many pages is a node stalling us. */
const MAX_SET_PAGES = 20

export class LightReader {
  readonly #get: NodeGet
  readonly #rpc: NodeRpc | undefined
  readonly #sets = new Map<string, ValidatorSet>()

  /** `get`: the nodes' REST gateways; `rpc`: their RPC endpoints, for the nodes that have one. */
  constructor (get: NodeGet, rpc?: NodeRpc) {
    this.#get = get
    this.#rpc = rpc
  }

  /** Whether `node`'s headers come with their own commit (its RPC), the head's included: its latest header can be verified, not only the one below. */
  seesHeadCommit (node: number): boolean {
    return this.#rpc?.has(node) === true
  }

  /** Node `node`'s block at `height`. */
  async block (node: number, height: bigint): Promise<GatewayBlock> {
    return gatewayBlock(await this.#get(node, `${BLOCKS}/${height}`))
  }

  /**
   * The light block at `height` from `node`: blocks it already has (`known`, by height) are
   * not fetched again; the commit is the block above's last_commit.
   */
  fetcher (node: number, known: ReadonlyMap<bigint, GatewayBlock>, via: LightSource = this.#sourceOf(node)): FetchLightBlock {
    const rpc = this.#rpc
    const signedHeader = via === 'rpc'
      ? async (height: bigint): Promise<SignedHeader> => rpcSignedHeader(await (rpc as NodeRpc).get(node, `/commit?height=${height}`))
      : this.#gatewaySignedHeader(node, known)
    return async (height) => {
      const { header, commit } = await signedHeader(height)
      const [validators, nextValidators] = await Promise.all([
        this.set(node, height, header.validatorsHash, via),
        this.set(node, height + 1n, header.nextValidatorsHash, via)
      ])
      return { signedHeader: { header, commit }, validators, nextValidators } satisfies LightBlock
    }
  }

  /** Header H from the gateway's block H, its commit the block H + 1's last_commit. */
  #gatewaySignedHeader (node: number, known: ReadonlyMap<bigint, GatewayBlock>): (height: bigint) => Promise<SignedHeader> {
    const blockAt = async (height: bigint): Promise<GatewayBlock> => known.get(height) ?? await this.block(node, height)
    return async (height) => {
      const [block, above] = await Promise.all([blockAt(height), blockAt(height + 1n)])
      const commit = above.lastCommit
      if (commit === undefined) throw new LightJsonError(`the block at ${height + 1n} carries no commit for ${height}`)
      return { header: block.header, commit }
    }
  }

  /** The set named `hash` at `height`: kept, or fetched from `node` (every page) `via` its RPC or its gateway. */
  async set (node: number, height: bigint, hash: Uint8Array, via: LightSource = this.#sourceOf(node)): Promise<ValidatorSet> {
    const key = Buffer.from(hash).toString('hex')
    const kept = this.#sets.get(key)
    if (kept !== undefined) return kept
    const set = validatorSetOf(await this.#pages(node, height, via))
    if (Buffer.compare(validatorSetHash(set), hash) === 0) this.#keep(key, set)
    return set
  }

  /** Its RPC when it has one; `via: 'rpc'` is only ever asked of a node that has one. */
  #sourceOf (node: number): LightSource {
    return this.seesHeadCommit(node) ? 'rpc' : 'gateway'
  }

  async #pages (node: number, height: bigint, via: LightSource): Promise<ValidatorInput[]> {
    const rpc = this.#rpc
    const pageAt = via === 'rpc'
      ? async (_offset: number, page: number): Promise<ValidatorPage> => rpcValidatorPage(await (rpc as NodeRpc).get(node, `/validators?height=${height}&per_page=${RPC_PER_PAGE}&page=${page}`))
      : async (offset: number): Promise<ValidatorPage> => validatorPage(await this.#get(node, `${VALIDATOR_SETS}/${height}?pagination.offset=${offset}`))
    const validators: ValidatorInput[] = []
    for (let pages = 0; pages < MAX_SET_PAGES; pages++) {
      const page = await pageAt(validators.length, pages + 1)
      validators.push(...page.validators)
      if (validators.length >= page.total || page.validators.length === 0) return validators
    }
    throw new LightJsonError(`the validator set at ${height} has more than ${MAX_SET_PAGES} pages`)
  }

  #keep (key: string, set: ValidatorSet): void {
    this.#sets.set(key, set)
    if (this.#sets.size > KEPT_SETS) this.#sets.delete(this.#sets.keys().next().value as string)
  }
}
