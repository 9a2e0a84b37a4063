import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Release } from '../../bounded-limit.js'
import type { ChainClient } from '../../chain/client.js'
import { MAX_TOTAL_VOTING_POWER } from '../../cometbft/types.js'
import { HttpError, badRequest } from '../../errors.js'
import { ByteBudget } from '../../http/byte-budget.js'
import { parseVerifyBlockBody } from '../../verify/block-body.js'
import { prepareBlockInWorker } from '../../verify/workers.js'
import { ErrorBody } from './schemas.js'
import { BUSY, checkCommit, inWorker, releaseOnClose, signersOf } from './verify-work.js'

// POST /v1/verify-block, in a scope of its own: its bodies can be as large as a block, so it
// has its own parser and limit. The bytes are held, from arrival until parsed, within
// VERIFY_BODY_BUDGET (503 beyond it, before waiting for a slot), and parsed in the worker
// thread once the request is admitted.

/** A block at the Cosmos SDK's default max_bytes (21 MiB) is about 28 MiB of JSON. */
export const VERIFY_BLOCK_BODY_LIMIT = 32 * 1024 * 1024
/** verify-block bodies held at once, from arrival until parsed: two of the largest. */
export const VERIFY_BODY_BUDGET = 2 * VERIFY_BLOCK_BODY_LIMIT

export interface VerifyBlockOptions {
  readonly chain: ChainClient
  readonly bodyBudget?: number
}

const VerifyBlockBody = Type.Object({
  block: Type.Object({
    header: Type.Object({
      chain_id: Type.String(),
      height: Type.Unknown({ description: 'int64: a JSON number or a decimal string' })
    }),
    last_commit: Type.Unknown({ description: 'the commit of the previous height: height, round, block_id, signatures' })
  }, {
    description: 'a block as the chain gateway encodes it (the `block` of /v1/epochs/{epoch}/participants: base64 bytes, ' +
      'block_id.part_set_header) or as CometBFT encodes it (its RPC /block: hex hashes, block_id.parts)'
  }),
  validators: Type.Array(Type.Object({
    pub_key: Type.String({ description: 'base64 of the 32-byte ed25519 consensus key' }),
    // A string to the schema: Ajv coerces a JSON number to one, and the body's parser keeps
    // integers beyond 2^53 exact as decimal strings (client-json.ts).
    voting_power: Type.String({
      pattern: '^[1-9][0-9]{0,18}$',
      description: `an integer from 1 to ${MAX_TOTAL_VOTING_POWER} (CometBFT's MaxTotalVotingPower), a JSON number or a decimal string`
    })
  }), { maxItems: 10_000, description: 'the validator set that signed the commit, in any order' })
})

// Go answered NoContent(200): status 200 and no body at all.
const Empty = Type.Unsafe<undefined>({ description: 'verified: an empty body' })
const ERRORS = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 413: ErrorBody, 429: ErrorBody, 500: ErrorBody, 503: ErrorBody, 504: ErrorBody } as const

export const verifyBlock: FastifyPluginAsyncTypebox<VerifyBlockOptions> = async (app, options) => {
  const { chain } = options
  const held = holdBodies(app, new ByteBudget(options.bodyBudget ?? VERIFY_BODY_BUDGET))
  app.post('/verify-block', {
    bodyLimit: VERIFY_BLOCK_BODY_LIMIT,
    preValidation: async (request) => {
      // No body at all (no content type): nothing to parse, the schema refuses it.
      if (request.body === undefined) return
      try {
        const bytes = request.body as unknown as Buffer
        request.body = await inWorker(request, 'the body', async (task) => parseVerifyBlockBody(bytes, task)) as typeof request.body
      } finally {
        // Parsed or refused, the bytes have been moved to the worker: their share is free.
        (held.get(request) as Release)()
      }
    },
    schema: {
      summary: 'Verify a block\'s last commit against the chain\'s validator set, then against the supplied one (optional route)',
      body: VerifyBlockBody,
      response: { 200: Empty, ...ERRORS }
    }
  }, async (request, reply) => {
    const prepared = await inWorker(request, 'the block', async (task) => prepareBlockInWorker(request.body, task))
    if (!prepared.ok) throw badRequest(prepared.error)
    const block = prepared.value
    const groundTruth = await signersOf(chain, block.lastCommit, request)
    await checkCommit(request, 'ground truth block verification failed', block, groundTruth)
    await checkCommit(request, 'block signature verification failed', block, block.validators)
    return reply.code(200).send(undefined)
  })
}

/** Replaces the scope's JSON parser: the bytes as they arrived, each request's share of `budget` held until released. */
function holdBodies (app: Parameters<typeof verifyBlock>[0], budget: ByteBudget): WeakMap<FastifyRequest, Release> {
  const held = new WeakMap<FastifyRequest, Release>()
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: VERIFY_BLOCK_BODY_LIMIT },
    (request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: Buffer) => void) => {
      const release = budget.take(body.length)
      if (release === undefined) {
        done(new HttpError(503, BUSY, { 'retry-after': '1' }))
        return
      }
      held.set(request, release)
      // Whatever happens before the parse (the client leaving while queued), the bytes go with the request.
      releaseOnClose(request, release)
      done(null, body)
    })
  return held
}
