import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { validatorSetFrom } from '../../chain/consensus.js'
import { chainPath } from '../../chain/paths.js'
import type { ChainReader } from '../../chain/types.js'
import { rpcSignedHeader, rpcValidators, RpcSignedHeader, RpcValidators } from '../../cometbft/rpc-json.js'
import { badRequest, HttpError } from '../../errors.js'
import { withChainErrors } from './schemas.js'

// What a browser's or an SDK's light client needs to advance (docs/verified-reads.md,
// "Bundles for clients that verify themselves"; the reference's §3.3, Helios' consensus RPC):
// the signed header at a height and the validator set at a height, in CometBFT RPC's own
// JSON (src/cometbft/rpc-json.ts), so a client that already reads a CometBFT node's
// /commit and /validators reads these. Nothing here is verified by edge-api: the client
// checks it against its own trusted header; a node that lies is caught there.
//
// Both are fixed by their height (route-classes.ts): cached per height, immutable.

const MAX_INT64 = 2n ** 63n - 1n
const HEIGHT_RULE = 'must be a block height: an integer from 1'

/** The chain's heads as the head poll last told them (ChainClient.heads). */
export interface KnownHead {
  /** The highest height any node has told (0: none yet). */
  readonly best: number
}

export interface LightRoutesOptions {
  readonly heads: KnownHead
}

const HeightParams = Type.Object({
  height: Type.String({ pattern: '^0*[1-9][0-9]{0,18}$', description: HEIGHT_RULE })
})

export const light: FastifyPluginAsyncTypebox<LightRoutesOptions> = async (app, { heads }) => {
  // The commit for H is carried by block H + 1: the newest signed header is the head's parent.
  const signedHeight = (param: string): bigint => heightUpTo(heads, param, (best) => best - 1, 'the newest signed header is at')
  const setHeight = (param: string): bigint => heightUpTo(heads, param, (best) => best, 'the newest validator set is at')

  app.get('/light/signed-header/:height', {
    schema: {
      summary: 'The signed header at a height (header and the commit that signs it), as CometBFT RPC /commit answers, for a client\'s light client',
      params: HeightParams,
      response: withChainErrors(RpcSignedHeader)
    },
    preHandler: async (request) => { signedHeight(request.params.height) }
  }, async (request) => {
    const height = signedHeight(request.params.height)
    const [block, above] = await Promise.all([blockAt(request.chain, height), blockAt(request.chain, height + 1n)])
    try {
      return rpcSignedHeader(block, above)
    } catch (err) {
      // Chain data CometBFT would refuse (InvalidBlockError): the chain gone wrong, a 500 naming it.
      throw new HttpError(500, `the chain's blocks at ${height} and ${height + 1n} do not make a signed header: ${(err as Error).message}`)
    }
  })

  app.get('/light/validators/:height', {
    schema: {
      summary: 'The validator set at a height, every validator, as CometBFT RPC /validators answers, for a client\'s light client',
      params: HeightParams,
      response: withChainErrors(RpcValidators)
    },
    preHandler: async (request) => { setHeight(request.params.height) }
  }, async (request) => {
    const height = setHeight(request.params.height)
    let set
    try {
      set = await validatorSetFrom(request.chain, height)
    } catch (err) {
      // The chain's own errors pass on as they are; a malformed set is a 500 naming what is wrong.
      if (err instanceof HttpError) throw err
      throw new HttpError(500, (err as Error).message)
    }
    return rpcValidators(height, set)
  })
}

/**
 * The height in the path, refused (400) before any chain request when it is out of range or
 * above `newest(best)` (the route's own preHandler runs before the answer cache's,
 * src/cache/http-cache.ts). The head is what the head poll last told; while it is unknown
 * (0), the node's own refusal is passed on.
 */
function heightUpTo (heads: KnownHead, param: string, newest: (best: number) => number, what: string): bigint {
  const height = BigInt(param)
  if (height > MAX_INT64) throw badRequest(`height ${param} ${HEIGHT_RULE} to 2^63 - 1`)
  const best = heads.best
  if (best > 0 && height > BigInt(newest(best))) throw badRequest(`height ${height}: ${what} ${newest(best)} (the chain's head is ${best})`)
  return height
}

/** The gateway's `block` at `height` (tendermint.types.Block: a raw proposer address, unlike sdk_block's bech32). */
async function blockAt (reader: ChainReader, height: bigint): Promise<unknown> {
  const answer = await reader.get(chainPath`/cosmos/base/tendermint/v1beta1/blocks/${height}`) as { block?: unknown }
  return answer.block
}
