import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { chainPath } from '../../chain/paths.js'
import { legacyChainQuery } from '../../errors.js'
import { withChainErrors } from './schemas.js'

/** An external chain's name as the bridge registers it, e.g. "ethereum". */
const ChainNameParam = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,64}$',
  description: 'must be a chain name: letters, digits, "_" or "-", at most 64 characters'
})

const BridgeAddresses = Type.Object({
  chain_name: Type.String(),
  chain_id: Type.String(),
  // [] where Go wrote null: lists that clients index are always arrays (docs/clients.md).
  addresses: Type.Array(Type.String(), { description: '[] when the chain has no bridge contracts' })
})

interface GatewayBridgeAddresses {
  addresses?: Array<{ address?: string } | null> | null
}

export const bridge: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/bridge/addresses', {
    schema: {
      summary: "The gonka bridge's contract addresses on an external chain",
      querystring: Type.Object({ chain: ChainNameParam }),
      response: withChainErrors(BridgeAddresses)
    }
  }, async (request) => {
    const name = request.query.chain
    // The Go service answered every chain gateway error with this 500.
    const answer = await legacyChainQuery(
      request.chain.get(chainPath`/productscience/inference/inference/bridge_addresses/${name}`),
      (err) => `Failed to get addresses for chain '${name}': ${err.message}`
    ) as GatewayBridgeAddresses | null
    const addresses = (answer?.addresses ?? []).map((entry) => entry?.address ?? '')
    return { chain_name: name, chain_id: name, addresses }
  })
}
