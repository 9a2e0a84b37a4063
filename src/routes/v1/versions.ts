import { readFileSync } from 'node:fs'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { ChainClient } from '../../chain/client.js'
import { ErrorBody } from './schemas.js'

const NODE_INFO = '/cosmos/base/tendermint/v1beta1/node_info'

// Read once at import: the running build's version cannot change under a live process.
// src/routes/v1 and dist/routes/v1 are both three levels below the package root.
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version

const VersionInfo = Type.Object({
  application_name: Type.String(),
  version: Type.String(),
  commit: Type.String()
})

const VersionsResponse = Type.Object({
  timestamp: Type.String({ description: 'RFC3339 UTC time of the answer' }),
  api_version: VersionInfo,
  node_version: VersionInfo
})

// The Go service answered this route's failure with "error", not the usual "message".
const VersionsError = Type.Object({ error: Type.Literal('failed to get node info') })

interface GatewayNodeInfo {
  application_version?: { name?: string, version?: string, git_commit?: string } | null
}

/**
 * Which edge-api and which chain node answer. Edge-only: the public proxy never routes it
 * (dapi's version of this route adds its ML nodes; edge-api has none to report).
 */
export const versions: FastifyPluginAsyncTypebox<{ chain: ChainClient }> = async (app, { chain }) => {
  app.get('/versions', {
    schema: {
      summary: 'The versions of this edge-api and of the chain node it reads',
      // 503 is load shedding (under-pressure), which answers before this handler runs.
      response: { 200: VersionsResponse, 500: VersionsError, 503: ErrorBody }
    }
  }, async (request, reply) => {
    let answer: GatewayNodeInfo | null
    try {
      answer = await chain.get(NODE_INFO) as GatewayNodeInfo | null
    } catch (err) {
      request.log.warn({ err }, 'failed to get node info')
      return reply.code(500).send({ error: 'failed to get node info' })
    }
    const node = answer?.application_version ?? {}
    return {
      timestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      api_version: { application_name: 'edge-api', version: PACKAGE_VERSION, commit: '' },
      node_version: { application_name: node.name ?? '', version: node.version ?? '', commit: node.git_commit ?? '' }
    }
  })
}
