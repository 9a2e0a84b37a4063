import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import type { ChainClient } from '../../chain/client.js'
import { readBlock, readValidatorSet } from '../../chain/consensus.js'
import { activeParticipantsKey } from '../../chain/active-participants.js'
import { decodeBase64 } from '../../chain/validator-address.js'
import { badRequest, HttpError } from '../../errors.js'
import { invalidParameter } from '../../http/param-errors.js'
import { RouteGroupLimit } from '../../http/route-group-limit.js'
import { parseVerifyBlockBody } from '../../verify/block-body.js'
import { BlockJsonError, decodeBlockJson } from '../../verify/block-json.js'
import { commitProblem, type BlockWithCommit, type Commit } from '../../verify/commit.js'
import { decodeHexGo } from '../../verify/go-hex.js'
import { ProofError, verifyValue, type ProofOp } from '../../verify/ics23-proof.js'
import { pathEscape } from '../../verify/key-path.js'
import { pubkeyToAddress } from '../../verify/pubkey-address.js'
import { checkCommitInWorker } from '../../verify/workers.js'
import { ED25519_KEY_SIZE, newValidatorSet, ValidatorSetError, type ValidatorInput, type ValidatorSet } from '../../verify/validator-set.js'
import { ErrorBody } from './schemas.js'

const HEIGHT_RULE = 'must be a block height: an integer from 1'

// The four optional routes that let an operator or a client check what the chain says
// instead of trusting it (docs/routes.md). They are CPU-heavy, so:
// - off unless EDGE_API_EXPOSE_OPTIONAL_ROUTES=true: 403 from an onRequest hook, before any
//   body is read (the router template blocks them too);
// - their own admission: VERIFY_CONCURRENCY run at once, VERIFY_QUEUE_LIMIT wait, the rest
//   get 503 at once, before their body is read;
// - signature checks, and the parse of a large verify-block body, run in a worker thread
//   (workers.ts), never on the event loop /readyz and the Tier A reads share.
// Messages are the Go service's (common/queryapi/verification.go and its debug handlers).
//
// One deliberate difference: a block's last commit is signed by the validator set of the
// height before it (the commit's own height), so that is the set fetched. The Go service
// fetched the set at the block's height, and so failed every block whose previous height had
// a different set (an epoch change); the set at the commit's height is also the one that
// /v1/epochs/{epoch}/participants pairs with its block.

export const VERIFY_CONCURRENCY = 2
export const VERIFY_QUEUE_LIMIT = 16
/** A block at the Cosmos SDK's default max_bytes (21 MiB) is about 28 MiB of JSON. */
export const VERIFY_BLOCK_BODY_LIMIT = 32 * 1024 * 1024

const DISABLED = 'this optional route is not exposed (EDGE_API_EXPOSE_OPTIONAL_ROUTES=false)'
const BUSY = 'too many verifications in progress; retry shortly'
const VERIFIED = 'Block signatures verified'
// What the Go service answered for any commit that does not verify; the detail goes to the log.
const INVALID_COMMIT = 'invalid commit signatures'

/** Overrides of the route group's limits (tests shrink them to reach them). */
export interface VerifyTuning {
  readonly concurrency?: number
  readonly queueLimit?: number
  readonly inlineBodyLimit?: number
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
    voting_power: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'int64 ≥ 1' })
  }), { maxItems: 10_000, description: 'the validator set that signed the commit, in any order' })
})

export const verify: FastifyPluginAsyncTypebox<VerifyRoutesOptions> = async (app, options) => {
  const { chain } = options
  if (options.expose) {
    const admission = new RouteGroupLimit({
      concurrency: options.concurrency ?? VERIFY_CONCURRENCY,
      queueLimit: options.queueLimit ?? VERIFY_QUEUE_LIMIT,
      busyMessage: BUSY
    })
    app.addHook('onRequest', async (request, reply) => {
      // Fastify's request.signal listens for the client leaving only from its first use: start it now.
      request.signal.throwIfAborted()
      let gone = false
      const onGone = (): void => { gone = true }
      reply.raw.once('close', onGone)
      const release = await admission.enter()
      reply.raw.off('close', onGone)
      if (gone) {
        // The client left while waiting for a slot: pass it on and do nothing for it.
        release()
        throw new HttpError(499, 'client closed the connection while waiting')
      }
      // The response is written or the connection is gone: either way the slot is free.
      reply.raw.once('close', release)
    })
  } else {
    app.addHook('onRequest', async () => {
      throw new HttpError(403, DISABLED)
    })
  }

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
    try {
      verifyValue(ops, root, keyPath, bytes)
    } catch (err) {
      throw badRequest(`proof verification failed: ${(err as ProofError).message}`)
    }
    return reply.code(200).send(undefined)
  })

  await app.register(verifyBlock, { chain, inlineBodyLimit: options.inlineBodyLimit })

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
    const answer = await readBlock(chain, height)
    let block: BlockWithCommit
    try {
      block = decodeBlockJson(answer)
    } catch (err) {
      throw new HttpError(500, `failed to decode commit: ${(err as BlockJsonError).message}`)
    }
    const problem = commitProblem(block.lastCommit)
    if (problem !== undefined) throw new HttpError(500, `failed to decode commit: ${problem}`)
    const set = await signersOf(chain, block.lastCommit as Commit)
    await checkCommit(request, 'block signature verification failed', block, set)
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

/** POST /verify-block, in a scope of its own: its bodies can be as large as a block, so it has its own parser and limit. */
const verifyBlock: FastifyPluginAsyncTypebox<Pick<VerifyRoutesOptions, 'chain' | 'inlineBodyLimit'>> = async (app, options) => {
  const { chain } = options
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: VERIFY_BLOCK_BODY_LIMIT },
    async (_request: FastifyRequest, body: Buffer) => parseVerifyBlockBody(body, options.inlineBodyLimit))

  app.post('/verify-block', {
    bodyLimit: VERIFY_BLOCK_BODY_LIMIT,
    schema: {
      summary: 'Verify a block\'s last commit against the chain\'s validator set, then against the supplied one (optional route)',
      body: VerifyBlockBody,
      response: { 200: Empty, ...CHAIN_READ_ERRORS, 413: ErrorBody }
    }
  }, async (request, reply) => {
    const block = blockFromBody(request.body.block)
    const supplied = suppliedValidatorSet(request.body.validators)
    const groundTruth = await signersOf(chain, block.lastCommit as Commit)
    await checkCommit(request, 'ground truth block verification failed', block, groundTruth)
    await checkCommit(request, 'block signature verification failed', block, supplied)
    return reply.code(200).send(undefined)
  })
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

function suppliedValidatorSet (validators: Static<typeof VerifyBlockBody>['validators']): ValidatorSet {
  const inputs: ValidatorInput[] = validators.map((v, i) => {
    const key = decodeBase64(v.pub_key)
    if (key?.length !== ED25519_KEY_SIZE) {
      throw badRequest(`Error decoding public key: validators[${i}].pub_key must be standard base64 of a ${ED25519_KEY_SIZE}-byte ed25519 key`)
    }
    return { pubKey: key, votingPower: BigInt(v.voting_power) }
  })
  try {
    return newValidatorSet(inputs)
  } catch (err) {
    throw badRequest(`invalid validators: ${(err as ValidatorSetError).message}`)
  }
}

/** The body's block, decoded and checked as CometBFT would before verifying its commit. */
function blockFromBody (body: unknown): BlockWithCommit {
  let block: BlockWithCommit
  try {
    block = decodeBlockJson(body)
  } catch (err) {
    throw badRequest(`invalid Block: ${(err as BlockJsonError).message}`)
  }
  const problem = commitProblem(block.lastCommit)
  if (problem !== undefined) throw badRequest(`invalid Block: last_commit: ${problem}`)
  return block
}

/** The chain's validator set that signed `commit`: the set at the commit's own height. */
async function signersOf (chain: ChainClient, commit: Commit): Promise<ValidatorSet | undefined> {
  // Height 0 has no validator set (the first block's last commit is empty), so nothing signed it.
  if (commit.height < 1n) return undefined
  const validators = await readValidatorSet(chain, commit.height)
  try {
    return newValidatorSet(validators)
  } catch (err) {
    // The chain's own set is not one CometBFT accepts: the chain data is wrong, not the request.
    throw new Error(`the chain's validator set at height ${commit.height} is invalid: ${(err as ValidatorSetError).message}`)
  }
}

/** Checks the block's last commit against `set` in the worker thread; 400 with Go's message when it does not verify. */
async function checkCommit (request: FastifyRequest, what: string, block: BlockWithCommit, set: ValidatorSet | undefined): Promise<void> {
  // The client left while the chain was read: nothing to answer, so no work to do.
  if (request.signal.aborted) throw new HttpError(499, 'client closed the connection before verification')
  const outcome = set === undefined
    ? { ok: false, error: 'no validator set signs a commit below height 1' } as const
    : await checkCommitInWorker({ chainId: block.chainId, commit: block.lastCommit as Commit, height: block.height, set })
  if (outcome.ok) return
  request.log.info({ height: String(block.height), detail: outcome.error }, what)
  throw badRequest(`${what}: ${INVALID_COMMIT}`)
}
