import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod, RouteOptions } from 'fastify'
import { readContextOf } from '../cache/read-context.js'
import { routeClass } from '../cache/route-classes.js'
import type { ChainClient } from '../chain/client.js'
import type { VerificationMode } from '../config/verification-settings.js'
import { HttpError } from '../errors.js'
import { answerAction, type AnswerAction, type ProvingOutcome } from './answer-policy.js'
import type { VerifiedAppHashes } from './app-hashes.js'
import { firstHonestAnswer, proveAnswer, type JudgedAnswer } from './prove-answer.js'
import { proveValue } from './prove-value.js'
import { provenRoute, type ProvenRoute, type RouteRequest } from './proven-routes.js'
import { VERIFICATION_HEADER, verificationHeader } from './verification-header.js'

// Proven answers wired into the routes (docs/verified-reads.md, "The modes"), with
// EDGE_API_VERIFICATION answers or strict; nothing of it exists in the other modes (app.ts adds
// the hook only then), so `off` keeps its hot path. A proven route (proven-routes.ts) opts in
// by its entry: the answer cache reads, keys and tags it at the verified height V
// (`atVerifiedHeight`, src/cache/http-cache.ts), and its own handler builds the answer once per
// node asked, each node's answer proven against that node's proofs; the first that is not a
// lie is served, every liar out of rotation with one error line. What is served in each mode
// is answerAction's (answer-policy.ts), and the X-Verification it says is kept with the cached
// answer, so a hit (local or pooled) says what its miss said. Every other latest-state route
// is marked unverified (`route`) in answers mode and refused (503) in strict.

/** The proven routes' Fastify URLs, by their proven-routes.ts names. `epoch=current` is a step of the participants route, whose keys include it. */
const PROVEN_URLS: Readonly<Record<string, string>> = {
  '/v1/epochs/:epoch': '/v1/epochs/latest',
  '/v1/epochs/:epoch/participants': '/v1/epochs/{epoch}/participants',
  '/v1/models': '/v1/models',
  '/v1/pricing': '/v1/pricing'
}

/** The line of a node whose answer its own proofs contradict (one per node: it stays out of rotation). */
export const ANSWER_LIE = 'chain node lying: its answer does not verify against its own proofs; out of rotation'

const NOT_YET: ProvingOutcome = { kind: 'unproven', reason: 'not-yet' }
const NOT_A_PROVEN_ROUTE: ProvingOutcome = { kind: 'unproven', reason: 'route' }

export interface ProvenAnswersOptions {
  readonly mode: 'answers' | 'strict'
  /** The nodes asked, one at a time, in rotation order. */
  readonly chain: ChainClient
  /** The verified app hashes (the cursor): a height without one is not-yet. */
  readonly hashes: VerifiedAppHashes
  /** Where a liar's one error line goes. */
  readonly log: { error: (fields: object, msg: string) => void }
}

/** The proven route a Fastify route serves; undefined for any other. */
export function provenRouteOf (url: string): ProvenRoute | undefined {
  const name = PROVEN_URLS[url]
  return name === undefined ? undefined : provenRoute(name)
}

/**
 * The constant X-Verification of a route's answers in `mode`, decided when the route is added
 * (src/http/verified-height.ts sends it on every answer that carries X-Block-Height): every
 * answer in headers mode; the routes that are not proven in answers mode; none otherwise
 * (a proven route's answer says its own; strict serves no unproven answer).
 */
export function routeVerification (mode: VerificationMode, url: string): string | undefined {
  if (mode === 'headers') return verificationHeader({ kind: 'unverified', reason: 'headers-only' })
  if (mode !== 'answers' || provenRouteOf(url) !== undefined) return undefined
  return answerAction(mode, NOT_A_PROVEN_ROUTE).header
}

/** The onRoute hook: a proven route answers proven; in strict mode another latest-state route is refused. */
export function provenAnswers (options: ProvenAnswersOptions): (route: RouteOptions) => void {
  const refusal = answerAction(options.mode, NOT_A_PROVEN_ROUTE)
  // Answered here, as admission's refusals are: no error line per request for what the mode says.
  const refuse = refusal.serve
    ? undefined
    : (_request: FastifyRequest, reply: FastifyReply): void => {
        reply.code(refusal.status).headers({ [VERIFICATION_HEADER]: refusal.header, 'cache-control': 'no-store' }).send({ message: refusal.message })
      }
  return (route) => {
    const proven = provenRouteOf(route.url)
    if (proven !== undefined) {
      route.config = { ...route.config, atVerifiedHeight: true }
      route.handler = provenHandler(proven, route.handler, options)
      return
    }
    const latest = [route.method].flat().some((method) => routeClass(method === 'HEAD' ? 'GET' : method, route.url) === 'latest')
    // First of its preHandlers: nothing is read for an answer that will not be served.
    if (latest && refuse !== undefined) route.preHandler = [refuse, ...[route.preHandler ?? []].flat()]
  }
}

/** `handler` run once per node asked, at the height the answer cache pinned, its answer proven; served as answerAction says. */
function provenHandler (proven: ProvenRoute, handler: RouteHandlerMethod, options: ProvenAnswersOptions): RouteHandlerMethod {
  const { mode, chain, hashes } = options
  return async function (this: FastifyInstance, request, reply) {
    const height = request.chain.height
    // Read at the head (V not known yet, or below the client's minimum): nothing proves it.
    if (height === undefined || hashes.appHashAfter(height) === undefined) {
      const action = answerAction(mode, NOT_YET)
      if (!action.serve) throw unservable(action)
      const answer: unknown = await handler.call(this, request, reply)
      reply.header(VERIFICATION_HEADER, action.header)
      return answer
    }
    const asked: RouteRequest = { params: request.params as Record<string, string>, height }
    const context = readContextOf(request)
    const judge = async (node: number): Promise<JudgedAnswer<unknown>> => {
      // The handler's reads, then the proofs, from this node alone: the answer judges the node that gave it.
      request.chain = chain.fromNode(node, context, height)
      const answer: unknown = await handler.call(this, request, reply)
      const proof = await proveAnswer(proven, asked, answer as Record<string, unknown>, async (key) => proveValue(chain.fromNode(node, context), hashes, key, height))
      return { answer, proof }
    }
    const rotation = chain.rotation
    const { answer, outcome } = await firstHonestAnswer(rotation.order, judge, (node, reason) => {
      const url = rotation.lied(node)
      if (url !== undefined) options.log.error({ node: url, height: String(height), route: proven.route, reason }, ANSWER_LIE)
    }, nodeFailed)
    const action = answerAction(mode, outcome)
    if (!action.serve) throw unservable(action)
    reply.header(VERIFICATION_HEADER, action.header)
    return answer
  }
}

/** A read that failed at one node (down, timed out, its proof refused: a 5xx or a chain error), not the client's 4xx: the next node is asked. */
function nodeFailed (err: unknown): boolean {
  return !(err instanceof HttpError && err.statusCode < 500)
}

/** A 503 saying why, with its X-Verification: never an unverified (or forged) body. */
function unservable (action: Extract<AnswerAction, { serve: false }>): HttpError {
  return new HttpError(action.status, action.message, { [VERIFICATION_HEADER]: action.header, 'retry-after': '1' })
}
