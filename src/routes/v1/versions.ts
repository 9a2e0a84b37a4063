import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { BuildInfo } from '../../build-info.js'
import { NODE_INFO_PATH } from '../../chain/paths.js'
import { ChainBusyError, OverShareError } from '../../errors.js'
import { ErrorBody } from './schemas.js'

const VersionInfo = Type.Object({
  application_name: Type.String(),
  version: Type.String(),
  commit: Type.String()
})

// edge-api's own entry also says when its image was built (src/build-info.ts), after the
// fields clients read.
const ApiVersionInfo = Type.Object({
  ...VersionInfo.properties,
  build_time: Type.String({ description: 'when the image was built (the Dockerfile\'s BUILD_TIME); "" when unknown' })
})

const VersionsResponse = Type.Object({
  timestamp: Type.String({ description: 'RFC3339 UTC time of the answer' }),
  api_version: ApiVersionInfo,
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
export const versions: FastifyPluginAsyncTypebox<{ build: BuildInfo }> = async (app, { build }) => {
  app.get('/versions', {
    schema: {
      summary: 'The versions of this edge-api and of the chain node it reads',
      // 503 is load shedding (src/admission/admit.ts), which answers before this handler runs.
      response: { 200: VersionsResponse, 500: VersionsError, 503: ErrorBody }
    }
  }, async (request, reply) => {
    let answer: GatewayNodeInfo | null
    try {
      // request.chain: the client's unpinned reads, carrying the request's trace (src/cache/http-cache.ts).
      answer = await request.chain.get(NODE_INFO_PATH) as GatewayNodeInfo | null
    } catch (err) {
      // A full read queue is this replica's load or this client's excess, not the node's
      // failure: the 503 or held 429 every other route answers (error-handler.ts).
      if (err instanceof ChainBusyError || err instanceof OverShareError) throw err
      request.log.warn({ err }, 'failed to get node info')
      return reply.code(500).send({ error: 'failed to get node info' })
    }
    const node = answer?.application_version ?? {}
    return {
      timestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      api_version: { application_name: 'edge-api', version: build.version, commit: build.commit, build_time: build.buildTime },
      node_version: { application_name: node.name ?? '', version: node.version ?? '', commit: node.git_commit ?? '' }
    }
  })
}
