import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import type { ChainClient } from '../../chain/client.js'
import { readBlock, readValidatorSet } from '../../chain/consensus.js'
import { activeParticipantsKey } from '../../chain/active-participants.js'
import { formatDuration } from '../../duration.js'
import { badRequest, HttpError } from '../../errors.js'
import { ByteBudget } from '../../http/byte-budget.js'
import { invalidParameter } from '../../http/param-errors.js'
import type { Release } from '../../bounded-limit.js'
import { RouteGroupLimit } from '../../http/route-group-limit.js'
import { parseVerifyBlockBody } from '../../verify/block-body.js'
import { BlockJsonError, decodeBlockJson } from '../../cometbft/block-json.js'
import { MAX_TOTAL_VOTING_POWER, type BlockWithCommit, type Commit } from '../../cometbft/types.js'
import { commitProblem } from '../../cometbft/validate-basic.js'
import type { ValidatorInput } from '../../cometbft/validator-set.js'
import { decodeBase64 } from '../../wire/go-base64.js'
import { decodeHexGo } from '../../wire/go-hex.js'
import type { ProofOp } from '../../verify/ics23-proof.js'
import { pathEscape } from '../../verify/key-path.js'
import { pubkeyToAddress } from '../../verify/pubkey-address.js'
import {
  checkCommitInWorker, prepareBlockInWorker, TaskTimeLimitError, verifyProofInWorker, type TaskOptions
} from '../../verify/workers.js'
import { ErrorBody } from './schemas.js'

const HEIGHT_RULE = 'must be a block height: an integer from 1'

// The four optional routes that let an operator or a client check what the chain says
// instead of trusting it (docs/routes.md). They are CPU-heavy, so:
// - off unless EDGE_API_EXPOSE_OPTIONAL_ROUTES=true: 403 from an onRequest hook, before any
//   body is read (the router template blocks them too);
// - their own admission: VERIFY_CONCURRENCY run at once, VERIFY_QUEUE_LIMIT wait, the rest
//   get 503 at once. A request is admitted once its body has arrived (requestTimeout bounds
//   that): a slow upload holds a connection, never a verification slot. verify-block bodies
//   are held, from arrival until parsed, within VERIFY_BODY_BUDGET bytes (503 beyond);
// - all of their CPU work (parsing and checking a verify-block body, building validator
//   sets, signature checks, ICS23 decompression and hashing) runs in a worker thread
//   (workers.ts), never on the event loop /readyz and the Tier A reads share, each task
//   within VERIFY_TASK_TIME_LIMIT_MS (503 beyond; its thread is stopped);
// - "the client left" means its connection closed before the response was written: the
//   work for it stops, and it is logged as 499.
// docs/verify-limits.md has every limit and what it answers.
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
/** verify-block bodies held at once, from arrival until parsed: two of the largest. */
export const VERIFY_BODY_BUDGET = 2 * VERIFY_BLOCK_BODY_LIMIT
/** Each task in the worker thread: 10,000 signatures take ~1.3 s on an idle core. */
export const VERIFY_TASK_TIME_LIMIT_MS = 5000

const DISABLED = 'this optional route is not exposed (EDGE_API_EXPOSE_OPTIONAL_ROUTES=false)'
const BUSY = 'too many verifications in progress; retry shortly'
const VERIFIED = 'Block signatures verified'
// What the Go service answered for any commit that does not verify; the detail goes to the log.
const INVALID_COMMIT = 'invalid commit signatures'

/** Overrides of the route group's limits (tests shrink them to reach them). */
export interface VerifyTuning {
  readonly concurrency?: number
  readonly queueLimit?: number
  readonly bodyBudget?: number
  readonly taskTimeLimitMs?: number
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
    // A string to the schema: Ajv coerces a JSON number to one, and the body's parser keeps
    // integers beyond 2^53 exact as decimal strings (client-json.ts).
    voting_power: Type.String({
      pattern: '^[1-9][0-9]{0,18}$',
      description: `an integer from 1 to ${MAX_TOTAL_VOTING_POWER} (CometBFT's MaxTotalVotingPower), a JSON number or a decimal string`
    })
  }), { maxItems: 10_000, description: 'the validator set that signed the commit, in any order' })
})

export const verify: FastifyPluginAsyncTypebox<VerifyRoutesOptions> = async (app, options) => {
  const { chain } = options
  if (!options.expose) {
    app.addHook('onRequest', async () => {
      throw new HttpError(403, DISABLED)
    })
  }
  const admission = new RouteGroupLimit({
    concurrency: options.concurrency ?? VERIFY_CONCURRENCY,
    queueLimit: options.queueLimit ?? VERIFY_QUEUE_LIMIT,
    busyMessage: BUSY
  })
  const timeLimitMs = options.taskTimeLimitMs ?? VERIFY_TASK_TIME_LIMIT_MS
  app.addHook('onRequest', async (request, reply) => {
    const left = new AbortController()
    // 'close' also comes once the response is written; only before that is it the client
    // leaving. (Not request.signal: Fastify aborts it on the request's 'close', which Node
    // emits as soon as the body has been read.)
    reply.raw.once('close', () => { if (!reply.raw.writableFinished) left.abort() })
    states.set(request, { reply, task: { timeLimitMs, signal: left.signal } })
  })
  // Once the body has arrived; for verify-block, before it is parsed (its own hook comes after this one).
  app.addHook('preValidation', async (request, reply) => {
    const release = await admission.enter()
    if (clientLeft(request)) {
      // The client left while waiting for a slot: pass it on and do nothing for it.
      release()
      throw new HttpError(499, 'client closed the connection while waiting')
    }
    // The response is written or the connection is gone: either way the slot is free.
    reply.raw.once('close', release)
  })

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

  await app.register(verifyBlock, { chain, bodyBudget: options.bodyBudget ?? VERIFY_BODY_BUDGET })

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
    const answer = await readBlock(chain, height, request.otelTrace ?? undefined)
    let block: BlockWithCommit
    try {
      block = decodeBlockJson(answer)
    } catch (err) {
      throw new HttpError(500, `failed to decode commit: ${(err as BlockJsonError).message}`)
    }
    const problem = commitProblem(block.lastCommit)
    if (problem !== undefined) throw new HttpError(500, `failed to decode commit: ${problem}`)
    const commit = block.lastCommit as Commit
    await checkCommit(request, 'block signature verification failed', { ...block, lastCommit: commit }, await signersOf(chain, commit, request))
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
const verifyBlock: FastifyPluginAsyncTypebox<{ readonly chain: ChainClient, readonly bodyBudget: number }> = async (app, options) => {
  const { chain } = options
  const budget = new ByteBudget(options.bodyBudget)
  const held = new WeakMap<FastifyRequest, Release>()
  // The bytes as they arrived, held within the budget (503 beyond it, before waiting for a
  // slot); parsed in the worker once the request is admitted (below).
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
      state(request).reply.raw.once('close', release)
      done(null, body)
    })

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
      response: { 200: Empty, ...CHAIN_READ_ERRORS, 413: ErrorBody }
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

/** What the hooks record per request: its reply, and what its worker tasks run with. */
interface RequestState {
  readonly reply: FastifyReply
  readonly task: TaskOptions
}

const states = new WeakMap<FastifyRequest, RequestState>()

function state (request: FastifyRequest): RequestState {
  return states.get(request) as RequestState
}

/** The connection closed before the response was written. */
function clientLeft (request: FastifyRequest): boolean {
  return state(request).task.signal.aborted
}

/**
 * Runs `work` in the worker with the request's time limit and signal: past the limit 503
 * (the thread is stopped: retry), and 499 when the client left meanwhile.
 */
async function inWorker<T> (request: FastifyRequest, what: string, work: (task: TaskOptions) => Promise<T>): Promise<T> {
  const { task } = state(request)
  try {
    return await work(task)
  } catch (err) {
    if (err instanceof TaskTimeLimitError) {
      throw new HttpError(503, `checking ${what} took longer than its time limit (${formatDuration(task.timeLimitMs)}); retry shortly`, { 'retry-after': '1' })
    }
    if (clientLeft(request)) throw new HttpError(499, 'client closed the connection during verification')
    throw err
  }
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

/** The chain's validator set that signed `commit`: the set at the commit's own height (built in the worker), read in `request`'s trace. */
async function signersOf (chain: ChainClient, commit: Commit, request: FastifyRequest): Promise<readonly ValidatorInput[] | undefined> {
  // Height 0 has no validator set (the first block's last commit is empty), so nothing signed it.
  if (commit.height < 1n) return undefined
  return await readValidatorSet(chain, commit.height, request.otelTrace ?? undefined)
}

/** Checks the block's last commit against the set of `validators` in the worker thread; 400 with Go's message when it does not verify. */
async function checkCommit (request: FastifyRequest, what: string, block: BlockWithCommit & { lastCommit: Commit }, validators: readonly ValidatorInput[] | undefined): Promise<void> {
  // The client left while the chain was read: nothing to answer, so no work to do.
  if (clientLeft(request)) throw new HttpError(499, 'client closed the connection before verification')
  const outcome = validators === undefined
    ? { ok: false, error: 'no validator set signs a commit below height 1' } as const
    : await inWorker(request, 'the commit', async (task) =>
      checkCommitInWorker({ chainId: block.chainId, commit: block.lastCommit, height: block.height, validators }, task))
  if (outcome.ok) return
  if ('invalidSet' in outcome) {
    // Only the chain's own set gets here (a supplied one was refused with 400 before the chain
    // was asked): the chain data is wrong, not the request.
    throw new Error(`the chain's validator set at height ${block.lastCommit.height} is invalid: ${outcome.error}`)
  }
  request.log.info({ height: String(block.height), detail: outcome.error }, what)
  throw badRequest(`${what}: ${INVALID_COMMIT}`)
}
