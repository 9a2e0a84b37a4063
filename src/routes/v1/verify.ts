import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { readContextOf } from '../../cache/read-context.js'
import type { ChainClient } from '../../chain/client.js'
import { readBlock } from '../../chain/consensus.js'
import { activeParticipantsKey } from '../../chain/active-participants.js'
import { badRequest, HttpError } from '../../errors.js'
import { REFUSALS } from '../../admission/refusals.js'
import { invalidParameter } from '../../http/param-errors.js'
import { BlockJsonError, decodeBlockJson } from '../../cometbft/block-json.js'
import type { BlockWithCommit, Commit } from '../../cometbft/types.js'
import { commitProblem } from '../../cometbft/validate-basic.js'
import { decodeBase64 } from '../../wire/go-base64.js'
import { decodeHexGo } from '../../wire/go-hex.js'
import type { ProofOp } from '../../verify/ics23-proof.js'
import { pathEscape } from '../../verify/key-path.js'
import { pubkeyToAddress } from '../../verify/pubkey-address.js'
import { verifyProofInWorker } from '../../verify/workers.js'
import { ErrorBody } from './schemas.js'
import { verifyBlock } from './verify-block.js'
import { admitVerifications, checkCommit, inWorker, signersOf, type VerifyAdmissionOptions } from './verify-work.js'

const HEIGHT_RULE = 'must be a block height: an integer from 1'

// The four optional routes that let an operator or a client check what the chain says
// instead of trusting it (docs/routes.md). They are CPU-heavy, so:
// - off unless EDGE_API_EXPOSE_OPTIONAL_ROUTES=true: 403 from an onRequest hook, before any
//   body is read (the router template blocks them too);
// - their own admission, worker thread and time limit (verify-work.ts), and for
//   verify-block's large bodies a byte budget (verify-block.ts); docs/verify-limits.md has
//   every limit and what it answers.
// Messages are the Go service's (common/queryapi/verification.go and its debug handlers).
//
// One deliberate difference: a block's last commit is signed by the validator set of the
// height before it (the commit's own height), so that is the set fetched. The Go service
// fetched the set at the block's height, and so failed every block whose previous height had
// a different set (an epoch change); the set at the commit's height is also the one that
// /v1/epochs/{epoch}/participants pairs with its block.

const DISABLED = REFUSALS.optionalRouteHidden.message
const VERIFIED = 'Block signatures verified'

/** Overrides of the route group's limits (tests shrink them to reach them). */
export interface VerifyTuning extends VerifyAdmissionOptions {
  readonly bodyBudget?: number
}

export interface VerifyRoutesOptions extends VerifyTuning {
  readonly chain: ChainClient
  readonly expose: boolean
}

// Go answered NoContent(200): status 200 and no body at all.
const Empty = Type.Unsafe<undefined>({ description: 'verified: an empty body' })
const Text = (description: string): ReturnType<typeof Type.String> => Type.String({ description })

// 400 bad input or a failed verification, 403 when the routes are off, 503 beyond the
// admission queue (or the chain unavailable), 500 for chain data that cannot be decoded.
const ERRORS = { 400: ErrorBody, 403: ErrorBody, 500: ErrorBody, 503: ErrorBody } as const
const CHAIN_READ_ERRORS = { ...ERRORS, 401: ErrorBody, 404: ErrorBody, 429: ErrorBody, 504: ErrorBody } as const

const ProofOpsBody = Type.Object({
  ops: Type.Array(Type.Object({
    type: Type.String({ description: '"ics23:iavl" or "ics23:simple"' }),
    key: Type.Optional(Type.String({ description: 'base64' })),
    data: Type.String({ description: 'base64 of an ics23 CommitmentProof' })
  }), { maxItems: 16 })
}, { description: 'the proof_ops of /v1/epochs/{epoch}/participants (CometBFT ProofOps)' })

const VerifyProofBody = Type.Object({
  value: Type.String({ description: 'the store value, hex (active_participants_bytes)' }),
  app_hash: Type.String({ description: 'hex; the app hash of the block after the value was written (block.header.app_hash)' }),
  proof_ops: ProofOpsBody,
  epoch: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'the epoch whose ActiveParticipants entry is proven' })
})

export const verify: FastifyPluginAsyncTypebox<VerifyRoutesOptions> = async (app, options) => {
  if (!options.expose) {
    app.addHook('onRequest', async () => {
      throw new HttpError(REFUSALS.optionalRouteHidden.status, DISABLED)
    })
  }
  admitVerifications(app, options)
  await app.register(verifyProof)
  await app.register(verifyBlock, { chain: options.chain, bodyBudget: options.bodyBudget })
  await app.register(debugRoutes, { chain: options.chain })
}

const verifyProof: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/verify-proof', {
    schema: {
      summary: 'Verify the ICS23 proof of an epoch\'s ActiveParticipants against an app hash (optional route)',
      body: VerifyProofBody,
      response: { 200: Empty, ...ERRORS }
    }
  }, async (request, reply) => {
    const { value, app_hash: appHash, proof_ops: proofOps, epoch } = request.body
    const ops = proofOps.ops.map(decodeProofOp)
    const root = hexField(appHash, 'Error decoding app hash')
    const bytes = hexField(value, 'Error decoding value')
    const keyPath = `/inference/${pathEscape(activeParticipantsKey(BigInt(epoch)))}`
    const outcome = await inWorker(request, 'the proof', async (task) => verifyProofInWorker({ ops, root, keyPath, value: bytes }, task))
    if (!outcome.ok) throw badRequest(`proof verification failed: ${outcome.error}`)
    return reply.code(200).send(undefined)
  })
}

const debugRoutes: FastifyPluginAsyncTypebox<{ readonly chain: ChainClient }> = async (app, { chain }) => {
  app.get('/debug/verify/:height', {
    schema: {
      summary: 'Verify the last commit of the block at a height against the chain\'s validator set (optional route)',
      params: Type.Object({
        height: Type.String({ pattern: '^0*[1-9][0-9]{0,18}$', description: HEIGHT_RULE })
      }),
      response: { 200: Text(VERIFIED), ...CHAIN_READ_ERRORS }
    }
  }, async (request, reply) => {
    const height = BigInt(request.params.height)
    if (height > 2n ** 63n - 1n) throw badRequest(invalidParameter('height', HEIGHT_RULE))
    const block = decodeCommittedBlock(await readBlock(chain, height, readContextOf(request)))
    await checkCommit(request, 'block signature verification failed', block, await signersOf(chain, block.lastCommit, request))
    return reply.type('text/plain; charset=utf-8').send(VERIFIED)
  })

  app.get('/debug/pubkey-to-addr/:pubkey', {
    schema: {
      summary: 'The gonka account address of a public key, base64 or hex (optional route)',
      params: Type.Object({ pubkey: Type.String({ description: 'base64 (tried first) or hex' }) }),
      response: { 200: Text('bech32 "gonka" address of RIPEMD-160(SHA-256(key))'), ...ERRORS }
    }
  }, async (request, reply) => {
    let address: string
    try {
      address = pubkeyToAddress(request.params.pubkey)
    } catch (err) {
      throw badRequest(`invalid pubkey: ${(err as Error).message}`)
    }
    return reply.type('text/plain; charset=utf-8').send(address)
  })
}

/** The chain's block answer with its last commit checked as CometBFT would; 500 (chain data gone wrong) otherwise. */
function decodeCommittedBlock (answer: unknown): BlockWithCommit & { lastCommit: Commit } {
  let block: BlockWithCommit
  try {
    block = decodeBlockJson(answer)
  } catch (err) {
    throw new HttpError(500, `failed to decode commit: ${(err as BlockJsonError).message}`)
  }
  const problem = commitProblem(block.lastCommit)
  if (problem !== undefined) throw new HttpError(500, `failed to decode commit: ${problem}`)
  return { ...block, lastCommit: block.lastCommit as Commit }
}

function decodeProofOp (op: Static<typeof ProofOpsBody>['ops'][number], i: number): ProofOp {
  const bytes = (text: string | undefined, field: string): Uint8Array => {
    const decoded = decodeBase64(text ?? '')
    if (decoded === undefined) throw badRequest(`invalid proof_ops: ops[${i}].${field} must be standard base64`)
    return decoded
  }
  return { type: op.type, key: bytes(op.key, 'key'), data: bytes(op.data, 'data') }
}

function hexField (text: string, what: string): Uint8Array {
  try {
    return decodeHexGo(text)
  } catch (err) {
    throw badRequest(`${what}: ${(err as Error).message}`)
  }
}
