import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { chainPath } from '../../chain/paths.js'
import { badRequest, legacyChainQuery, notFound } from '../../errors.js'
import { goIntegerError, parseGoInteger } from '../../http/param-errors.js'
import { fromProtoJson, ProtoMessage } from '../../wire/encoding-json.js'
import { Int64 } from '../../wire/schema.js'
import { withChainErrors } from './schemas.js'

const HEIGHT_RULE = 'a decimal signed 64-bit integer (a block height)'

// inference.inference.PoCBatch (pocbatch.proto). Older chains named its fields in
// camelCase, newer ones in snake_case; Go's encoding/json wrote whichever names the
// deployed chain's generated struct had, so both spellings are passed on.
const PoCBatch = ProtoMessage({
  participant_address: Type.String(),
  poc_stage_start_block_height: Int64(),
  received_at_block_height: Int64(),
  nonces: Type.Array(Int64()),
  dist: Type.Array(Type.Number()),
  batch_id: Type.String(),
  node_id: Type.String(),
  participantAddress: Type.String({ description: 'older chains: participant_address' }),
  pocStageStartBlockHeight: Int64({ description: 'older chains: poc_stage_start_block_height' }),
  receivedAtBlockHeight: Int64({ description: 'older chains: received_at_block_height' })
})

// QueryPocBatchesForStageResponse as Go's encoding/json wrote it: numbers, omitempty.
const PocBatchesResponse = ProtoMessage({
  poc_batch: Type.Array(ProtoMessage({
    participant: Type.String(),
    pub_key: Type.String(),
    hex_pub_key: Type.String(),
    poc_batch: Type.Array(PoCBatch)
  }))
})

export const pocBatches: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/poc-batches/:epoch', {
    schema: {
      summary: 'The PoC batches submitted for the PoC stage that starts at a block height',
      params: Type.Object({
        // Go binds it with strconv.ParseInt (sign allowed); malformed values get its words
        // (x-go-int), the 64-bit range is checked in the preHandler.
        epoch: Type.String({ pattern: '^[+-]?[0-9]+$', description: HEIGHT_RULE, 'x-go-int': 'int64' })
      }),
      response: withChainErrors(PocBatchesResponse)
    },
    // Before the answer is pinned (src/cache/http-cache.ts runs the route's own preHandlers
    // first): a height out of range is a 400 without any chain request, the head poll included.
    preHandler: async (request) => { stageHeight(request.params.epoch) }
  }, async (request) => {
    const height = stageHeight(request.params.epoch)
    // The Go service returned the gRPC error unmapped, which Echo answered with a bare 500.
    const answer = await legacyChainQuery(
      request.chain.get(chainPath`/productscience/inference/inference/poc_batches_for_stage/${height}`),
      () => 'Internal Server Error'
    )
    const body = fromProtoJson(PocBatchesResponse, answer)
    if (body?.poc_batch === undefined) throw notFound(`PoC batches not found. epoch = ${height}`)
    return body
  })
}

/** The PoC stage's start height in the path, with Go's strconv.ParseInt words for one out of range. */
function stageHeight (param: string): bigint {
  const height = parseGoInteger(param, 'int64')
  if (height === undefined) throw badRequest(goIntegerError('epoch', param, 'int64'))
  return height
}
