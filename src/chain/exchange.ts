import {
  ChainAnswerTooLargeError,
  ChainBadAnswerError,
  ChainHeightUnavailableError,
  ChainStatusError,
  ChainTimeoutError,
  ChainUnavailableError,
  GrpcCode
} from '../errors.js'
import type { Clock } from '../clock.js'
import { formatDuration } from '../duration.js'
import type { Deadline } from './deadline.js'
import { answeredHeight, HEIGHT_HEADER, isUnservableHeight } from './height-headers.js'
import type { ChainHeads } from './heights.js'
import { retryAfterMs, type ChainNode, type ChainNodes } from './nodes.js'
import { chainOutcome, type ChainObserver, type ChainOutcome, type ChainTrace, type ChainTracer, type Outcome } from './types.js'

// One exchange with one node, in the manner of an undici dispatcher: the request, the size
// cap, the parse, the node's health and head as the answer tells them, and how it ended for
// the observer and the tracer. Which node, and what happens after, are the callers'.

/** The abort reason of a hedged read's attempt that lost the race. */
export const ABANDONED = new Error('the other attempt of this hedged read answered first')

export interface NodeExchangeOptions {
  readonly nodes: ChainNodes
  /** Told the height each answer was read at. */
  readonly heads: ChainHeads
  /** The largest chain answer read, in bytes; beyond it the answer is cut off (502). */
  readonly maxResponseBytes: number
  readonly observer: ChainObserver
  readonly tracer: ChainTracer | undefined
  /** What an exchange's duration is read on: real time (REAL_CLOCK), as the socket's I/O is. */
  readonly clock: Clock
}

/** What one exchange sends, and under which budget. */
export interface ExchangeRequest {
  /** The gateway path, its query string included. */
  readonly path: string
  readonly deadline: Deadline
  /** Aborts this exchange alone (a hedged read's attempt). @default the deadline's signal */
  readonly signal?: AbortSignal
  /** Its position among its read's attempts, from 1 (a span attribute). */
  readonly attempt: number
  readonly trace?: ChainTrace | undefined
  /** Pinned to this height (x-cosmos-block-height). */
  readonly height?: number | undefined
  /** It is a hedged read's second attempt. */
  readonly hedge?: boolean
  /**
   * It is the head poll's (pinning.ts): its failure marks no node down, and its height is
   * reported by the poll. A node whose blocks/latest a proxy filters out, or hangs, may answer
   * every query: the poll tells its head, the reads and readiness tell its health (issue 33).
   */
  readonly headPoll?: boolean
}

export class NodeExchange {
  readonly #nodes: ChainNodes
  readonly #heads: ChainHeads
  readonly #maxResponseBytes: number
  readonly #observer: ChainObserver
  readonly #tracer: ChainTracer | undefined
  readonly #clock: Clock

  constructor (options: NodeExchangeOptions) {
    this.#nodes = options.nodes
    this.#heads = options.heads
    this.#maxResponseBytes = options.maxResponseBytes
    this.#observer = options.observer
    this.#tracer = options.tracer
    this.#clock = options.clock
  }

  /** One request to one node, timed, reported to the observer, and traced when it is a traced request's. */
  async send (node: ChainNode, request: ExchangeRequest): Promise<Outcome> {
    const started = this.#clock.now()
    const { trace, deadline } = request
    const signal = request.signal ?? deadline.signal
    const traced = trace === undefined ? undefined : this.#tracer?.exchange(trace, node.index + 1, request.path, request.attempt, request.hedge ?? false)
    const outcome = await this.#attempt(node, request, signal, traced?.headers)
    const label = outcomeLabel(outcome, signal, deadline)
    this.#observer.exchange(node.index + 1, label, (this.#clock.now() - started) / 1000)
    traced?.end(label)
    return outcome
  }

  /**
   * One request to one node, its body read to the end (an unread body holds its socket) or
   * cut off at the size limit. Reports the node's health: any answer means it is up; a
   * refused, dropped or timed-out exchange means it is down. Reports the height it answered at.
   */
  async #attempt (node: ChainNode, request: ExchangeRequest, signal: AbortSignal, traceHeaders: Readonly<Record<string, string>> | undefined): Promise<Outcome> {
    let received: Received | Outcome
    try {
      received = await this.#receive(node, request, signal, traceHeaders)
    } catch (err) {
      return this.#unanswered(node, request, signal, err)
    }
    return 'text' in received ? this.#judge(node, request, received) : received
  }

  /** The answer's status, headers and body; an answer declared over the size limit is refused unread. */
  async #receive (node: ChainNode, request: ExchangeRequest, signal: AbortSignal, traceHeaders: Readonly<Record<string, string>> | undefined): Promise<Received | Outcome> {
    const { path, height } = request
    const answer = await node.pool.request({ origin: node.origin, path: node.prefix + path, method: 'GET', headers: requestHeaders(height, traceHeaders), signal })
    const { statusCode } = answer
    const answered = answeredHeight(answer.headers)
    // An error answer's height counts for nothing: a proxy's page may carry anything.
    if (answered !== undefined && statusCode >= 200 && statusCode < 300) this.#heads.observe(node.index, answered, request.headPoll === true ? 'poll' : height === undefined ? 'latest' : 'pinned')
    // A declared length over the limit is refused before reading a byte; destroying the
    // unread body closes the socket. Chunked answers are cut off by undici (maxResponseSize).
    const declared = Number(answer.headers['content-length'])
    if (declared > this.#maxResponseBytes) {
      answer.body.destroy()
      this.#nodes.answered(node)
      return { ok: false, error: new ChainAnswerTooLargeError(this.#maxResponseBytes, `${node.url} answered ${statusCode} with content-length ${declared} for ${path}`), tryNext: false }
    }
    return { statusCode, answered, retryAfterMs: retryAfterMs(answer.headers['retry-after']), text: await answer.body.text() }
  }

  /** No answer read: timed out, aborted, cut off at the size limit, or the node not reached. */
  #unanswered (node: ChainNode, request: ExchangeRequest, signal: AbortSignal, err: unknown): Outcome {
    const { deadline, path } = request
    if (deadline.timedOut()) {
      this.#failed(node, request, `no answer within ${formatDuration(deadline.timeoutMs)}`)
      return { ok: false, error: new ChainTimeoutError(deadline.timeoutMs), tryNext: false }
    }
    // abortAll: shutting down, not the node's fault.
    if (signal.aborted) return { ok: false, error: new ChainUnavailableError(signal.reason), tryNext: false }
    if ((err as { code?: unknown }).code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
      this.#nodes.answered(node)
      return { ok: false, error: new ChainAnswerTooLargeError(this.#maxResponseBytes, `${node.url} answered more for ${path}`), tryNext: false }
    }
    // Refused, reset, closed mid-answer, name not resolved: this node cannot be reached.
    this.#failed(node, request, describe(err))
    return { ok: false, error: new ChainUnavailableError(err), tryNext: true }
  }

  /** The outcome of an answer read, and what it says of the node's health. */
  #judge (node: ChainNode, request: ExchangeRequest, received: Received): Outcome {
    const { path, height } = request
    const outcome = parseAnswer(received, `${node.url}${path}`)
    // A height this node cannot serve (behind, pruned) is its failure: the next node may have
    // it, and the node is up all the same. When edge-api chose the height (a pinned read), no
    // node having it is a 503, never the client's fault; a height the client put in the path
    // keeps the gateway's own answer.
    if (!outcome.ok && outcome.error instanceof ChainStatusError && isUnservableHeight(outcome.error.message)) {
      this.#nodes.answered(node)
      const error = height === undefined ? outcome.error : new ChainHeightUnavailableError(`${node.url}${path}: ${outcome.error.message}`)
      return { ok: false, error, tryNext: true }
    }
    // A non-2xx answer that is not the gateway speaking (a proxy's error page) stands for a
    // node that is not there: like a refused connection, probed again after its Retry-After.
    if (!outcome.ok && outcome.tryNext && !isRateLimit(outcome.error)) {
      this.#failed(node, request, `answered ${received.statusCode} without a gateway error body`, received.retryAfterMs)
      return outcome
    }
    // A node refusing the read for its load (parseAnswer: a 429, gRPC ResourceExhausted) is
    // up, and skipped for its Retry-After (nodes.ts, rateLimited).
    this.#nodes.answered(node)
    if (!outcome.ok && isRateLimit(outcome.error)) this.#nodes.rateLimited(node, received.retryAfterMs)
    return outcome
  }

  /** The node failed an exchange: it is skipped as down, unless the exchange was the head poll's (ExchangeRequest.headPoll). */
  #failed (node: ChainNode, request: ExchangeRequest, reason: string, retryAfterMs?: number): void {
    if (request.headPoll !== true) this.#nodes.failed(node, reason, retryAfterMs)
  }
}

/** The outcome label of one exchange; abortAll (shutting down) is told apart from a node that cannot be reached. */
function outcomeLabel (outcome: Outcome, signal: AbortSignal, deadline: Deadline): ChainOutcome {
  if (outcome.ok) return 'ok'
  if (outcome.error instanceof ChainUnavailableError && signal.aborted && !deadline.timedOut()) return signal.reason === ABANDONED ? 'abandoned' : 'aborted'
  return chainOutcome(outcome.error)
}

/** A node's refusal of a read for its load (parseAnswer). */
function isRateLimit (error: unknown): boolean {
  return error instanceof ChainStatusError && error.grpcCode === GrpcCode.ResourceExhausted
}

/** An answer read to its end. */
interface Received {
  readonly statusCode: number
  /** The height the node says it answered at. */
  readonly answered: number | undefined
  /** The node's Retry-After, in ms. */
  readonly retryAfterMs: number | undefined
  readonly text: string
}

function parseAnswer ({ statusCode, text, answered: height, retryAfterMs }: Received, where: string): Outcome {
  if (statusCode >= 200 && statusCode < 300) {
    try {
      return { ok: true, value: JSON.parse(text), height }
    } catch (err) {
      return { ok: false, error: new ChainBadAnswerError(`chain answered ${statusCode} with a body that is not JSON for ${where}: ${(err as Error).message}`), tryNext: false }
    }
  }
  let error: unknown
  try {
    error = JSON.parse(text)
  } catch {}
  // A node that rate-limits (429, gRPC ResourceExhausted) is overloaded, not the client at
  // fault: the read goes to another node at once (issue 33). The client gets the 429 only
  // when every node refused it, with the last one's Retry-After.
  if (statusCode === 429 || (isGatewayError(error) && error.code === GrpcCode.ResourceExhausted)) {
    const message = isGatewayError(error) ? error.message : 'chain node rate-limited this read'
    const headers: Record<string, string> = retryAfterMs === undefined ? {} : { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) }
    return { ok: false, error: new ChainStatusError(GrpcCode.ResourceExhausted, message, headers), tryNext: true }
  }
  if (isGatewayError(error)) return { ok: false, error: new ChainStatusError(error.code, error.message), tryNext: false }
  return { ok: false, error: new ChainUnavailableError(`chain answered ${statusCode} without a gateway error body for ${where}`), tryNext: true }
}

/** A transport failure in one line for the log (undici's and Node's socket errors all carry a code). */
function describe (err: unknown): string {
  const { message, code } = err as NodeJS.ErrnoException
  return `${message} (${code})`
}

function isGatewayError (value: unknown): value is { code: number, message: string } {
  const v = value as { code?: unknown, message?: unknown } | null | undefined
  return typeof v?.code === 'number' && typeof v.message === 'string'
}

/** A chain request's headers: the height it is pinned to, and the trace context when traced. */
function requestHeaders (height: number | undefined, traceHeaders: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const headers: Record<string, string> = height === undefined ? { accept: 'application/json' } : { accept: 'application/json', [HEIGHT_HEADER]: String(height) }
  return traceHeaders === undefined ? headers : { ...headers, ...traceHeaders }
}
