import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Release } from '../../bounded-limit.js'
import { readContextOf } from '../../cache/read-context.js'
import type { ChainClient } from '../../chain/client.js'
import { readValidatorSet } from '../../chain/consensus.js'
import type { BlockWithCommit, Commit } from '../../cometbft/types.js'
import type { ValidatorInput } from '../../cometbft/validator-set.js'
import { formatDuration } from '../../duration.js'
import { badRequest, HttpError } from '../../errors.js'
import { RouteGroupLimit } from '../../http/route-group-limit.js'
import { checkCommitInWorker, TaskTimeLimitError, type TaskOptions } from '../../verify/workers.js'

// The optional routes' work for one request (docs/verify-limits.md): admitted once its body
// has arrived (VERIFY_CONCURRENCY at once, VERIFY_QUEUE_LIMIT waiting, 503 beyond), run in
// the worker thread within VERIFY_TASK_TIME_LIMIT_MS (503 beyond; the thread is stopped),
// and stopped when the client leaves, which is logged as 499. "The client left" means its
// connection closed before the response was written.

export const VERIFY_CONCURRENCY = 2
export const VERIFY_QUEUE_LIMIT = 16
/** Each task in the worker thread: 10,000 signatures take ~1.3 s on an idle core. */
export const VERIFY_TASK_TIME_LIMIT_MS = 5000
export const BUSY = 'too many verifications in progress; retry shortly'
// What the Go service answered for any commit that does not verify; the detail goes to the log.
const INVALID_COMMIT = 'invalid commit signatures'

export interface VerifyAdmissionOptions {
  readonly concurrency?: number
  readonly queueLimit?: number
  readonly taskTimeLimitMs?: number
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

/** Adds to `app`'s scope the hooks that track each request's client and admit it to the work. */
export function admitVerifications (app: FastifyInstance, options: VerifyAdmissionOptions): void {
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
    const release = await admission.enter(request.readClient)
    if (clientLeft(request)) {
      // The client left while waiting for a slot: pass it on and do nothing for it.
      release()
      throw new HttpError(499, 'client closed the connection while waiting')
    }
    // The response is written or the connection is gone: either way the slot is free.
    reply.raw.once('close', release)
  })
}

/** Calls `release` once the request's connection closes, whatever happened before. */
export function releaseOnClose (request: FastifyRequest, release: Release): void {
  state(request).reply.raw.once('close', release)
}

/** The connection closed before the response was written. */
function clientLeft (request: FastifyRequest): boolean {
  return state(request).task.signal.aborted
}

/**
 * Runs `work` in the worker with the request's time limit and signal: past the limit 503
 * (the thread is stopped: retry), and 499 when the client left meanwhile.
 */
export async function inWorker<T> (request: FastifyRequest, what: string, work: (task: TaskOptions) => Promise<T>): Promise<T> {
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

/** The chain's validator set that signed `commit`: the set at the commit's own height (built in the worker), read as `request`'s (its trace, its client's turn). */
export async function signersOf (chain: ChainClient, commit: Commit, request: FastifyRequest): Promise<readonly ValidatorInput[] | undefined> {
  // Height 0 has no validator set (the first block's last commit is empty), so nothing signed it.
  if (commit.height < 1n) return undefined
  return await readValidatorSet(chain, commit.height, readContextOf(request))
}

/** Checks the block's last commit against the set of `validators` in the worker thread; 400 with Go's message when it does not verify. */
export async function checkCommit (request: FastifyRequest, what: string, block: BlockWithCommit & { lastCommit: Commit }, validators: readonly ValidatorInput[] | undefined): Promise<void> {
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
