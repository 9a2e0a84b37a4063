import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ChainClient } from '../../chain/client.js'

// Placeholder: being built (see the issue); registered already so index.ts stays stable.
export const restrictions: FastifyPluginAsyncTypebox<{ chain: ChainClient }> = async (_app, _opts) => {}
