import {
  ChainAnswerTooLargeError,
  ChainBadAnswerError,
  ChainHeightUnavailableError,
  ChainStatusError,
  ChainTimeoutError,
  type HttpError
} from '../errors.js'
import { NO_CLIENT } from '../fair-queue.js'
import type { HedgeResult, HedgeSkip } from './hedging.js'

// What the chain client's parts (docs/layout.md, src/chain/) and its users share: the reader
// every route reads through, how an exchange with a node ended, and the hooks metrics and
// tracing attach to. Only types and what defines their values live here, so every part can
// import it without an import circle.

export type Query = Readonly<Record<string, string | undefined>>

/** What reads the chain for one answer: pinned to one height, or each read at its node's latest. */
export interface ChainReader {
  /** The height every read is pinned to (x-cosmos-block-height); undefined: none. */
  readonly height: number | undefined
  /** GET a gateway path (already percent-encoded, see chainPath) and return its parsed JSON. */
  get (path: string, query?: Query): Promise<unknown>
}

/** A chain answer and the height the node says it answered at. */
export interface Answer {
  readonly value: unknown
  readonly height: number | undefined
}

/** One exchange with one node: its answer, or why not, and whether another node may be asked. */
export type Outcome =
  | { readonly ok: true, readonly value: unknown, readonly height?: number | undefined }
  | { readonly ok: false, readonly error: HttpError, readonly tryNext: boolean }

/**
 * One read as the limiter, coalescing and the choice of node see it: a gateway path with its
 * query string, the height it is pinned to, and how it is read.
 */
export interface ReadRequest {
  /** The gateway path, its query string included. */
  readonly target: string
  /** Pinned to this height (x-cosmos-block-height); undefined: the node's latest. */
  readonly height?: number | undefined
  /** A latest-state read (pinned, or at the node's latest): lagging nodes are skipped. */
  readonly latest?: boolean
  /** May be hedged (docs/hedged-reads.md). */
  readonly hedged: boolean
  /** The request's trace, handed to each exchange of the read. */
  readonly trace?: ChainTrace | undefined
  /** The request's client: whose turn the read waits for in the read queue (fair-queue.ts); NO_CLIENT for no request. */
  readonly client: string
  /**
   * Asked of this node alone (0-based, CHAIN_REST_URL's order), with no failover: a read whose
   * answer judges the node that gave it (a proof, src/proven/). @default the choice of node
   */
  readonly node?: number | undefined
}

/**
 * Whose a reader's reads are: the request's trace and its client, carried as arguments from
 * the request down to the read queue, as the trace is. Not AsyncLocalStorage: on Node 20 its
 * promise hook costs every promise of the process (docs/overload.md).
 */
export interface ReadContext {
  readonly trace?: ChainTrace | undefined
  /** Required: a reader says whose its reads are, NO_CLIENT when nobody's. */
  readonly client: string
}

/** The context of reads for no request (background work, probes): untraced, NO_CLIENT's. */
export const NO_CONTEXT: ReadContext = { client: NO_CLIENT }

/**
 * How one exchange with one node ended (a metrics label: few values, never an address);
 * `abandoned`: the other attempt of a hedged read answered first, this one was aborted.
 */
export type ChainOutcome = 'ok' | 'gateway_error' | 'height_unavailable' | 'timeout' | 'unavailable' | 'too_large' | 'bad_answer' | 'aborted' | 'abandoned'

/** The outcome label of a chain error (readiness labels its probes with it too). */
export function chainOutcome (error: unknown): ChainOutcome {
  if (error instanceof ChainStatusError) return 'gateway_error'
  if (error instanceof ChainHeightUnavailableError) return 'height_unavailable'
  if (error instanceof ChainTimeoutError) return 'timeout'
  if (error instanceof ChainAnswerTooLargeError) return 'too_large'
  if (error instanceof ChainBadAnswerError) return 'bad_answer'
  return 'unavailable'
}

/** Told of every exchange with a node (reads, their failover attempts and probes): src/metrics/ counts them. */
export interface ChainObserver {
  /** `node` is the node's 1-based position in CHAIN_REST_URL, as /readyz names it ("node 1"). */
  exchange (node: number, outcome: ChainOutcome, seconds: number): void
  /** A hedge was sent and ended so (docs/hedged-reads.md). */
  hedged? (result: HedgeResult): void
  /** A hedge was due and not sent, for this reason. */
  hedgeSkipped? (reason: HedgeSkip): void
}

export const NO_OBSERVER: ChainObserver = { exchange: () => {} }

/**
 * A request's trace, as the tracer made it (src/tracing/): opaque here. A request's readers
 * carry it (get, at, latest, reader, traced, unhedged) down to each exchange of their reads,
 * which hands it back to ChainTracer.exchange; a read given none is not traced.
 */
export type ChainTrace = object

/** Traces each exchange with a node (src/tracing/); absent when tracing is off. */
export interface ChainTracer {
  /**
   * An exchange of `trace`'s request is about to be sent: the headers to send with it
   * (traceparent), and its end; undefined when it is not traced (the request has ended).
   * `hedge`: it is a hedged read's second attempt.
   */
  exchange (trace: ChainTrace, node: number, path: string, attempt: number, hedge?: boolean): TracedExchange | undefined
}

export interface TracedExchange {
  readonly headers: Readonly<Record<string, string>>
  end (outcome: ChainOutcome): void
}
