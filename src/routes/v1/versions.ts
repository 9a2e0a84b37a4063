import { existsSync, readFileSync } from 'node:fs'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { NODE_INFO_PATH, type ChainClient } from '../../chain/client.js'
import { ErrorBody } from './schemas.js'

// Read once at import: the running build's version cannot change under a live process.
const PACKAGE_VERSION = nearestPackageVersion(new URL('.', import.meta.url))

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
      answer = await chain.get(NODE_INFO_PATH) as GatewayNodeInfo | null
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

/**
 * The version in the nearest package.json at or above `dir`: edge-api's own, whether this
 * module runs from src/ or dist/ and however deep it sits (no path counted in levels).
 */
function nearestPackageVersion (dir: URL): string {
  const file = new URL('package.json', dir)
  if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version
  const parent = new URL('..', dir)
  /* c8 ignore next */ // edge-api always runs inside its package
  if (parent.href === dir.href) throw new Error('no package.json above the running module')
  return nearestPackageVersion(parent)
}
