import type { ChainOutcome, ChainTrace, ChainTracer, TracedExchange } from '../chain/client.js'
import { newSpanId } from './ids.js'
import { pathTemplate } from './path-template.js'
import type { RequestTrace, ServerSpans } from './server-spans.js'
import { ChainSpanRecord } from './span-records.js'
import type { SpanQueue } from './span-queue.js'
import { traceparentOf } from './trace-context.js'

/**
 * One CLIENT span per exchange with a chain node, child of the request's span, with
 * traceparent sent to the node: the node by its position (edge_api.chain.node=1, as /readyz
 * names it), never its URL; the path's template; the outcome; the attempt under failover
 * or hedging (edge_api.chain.hedge on a hedge).
 * An exchange outside a request (a background probe of a node that is down) carries no trace
 * and is not traced; nor is one that starts after its request's end. An unsampled request's
 * exchanges still send their traceparent (sampled flag 00), and record nothing.
 */
export class ChainSpans implements ChainTracer {
  readonly #server: ServerSpans
  readonly #queue: SpanQueue

  constructor (server: ServerSpans, queue: SpanQueue) {
    this.#server = server
    this.#queue = queue
  }

  exchange (of: ChainTrace, node: number, path: string, attempt: number, hedge = false): TracedExchange | undefined {
    // The chain client carries what src/cache/http-cache.ts gave the request's readers: its RequestTrace.
    const context = this.#server.contextOf(of as RequestTrace)
    if (context === undefined) return undefined
    const spanId = newSpanId()
    const headers: Record<string, string> = { traceparent: traceparentOf(context.traceId, spanId, context.sampled) }
    if (context.traceState !== '') headers.tracestate = context.traceState
    if (!context.sampled) return { headers, end: UNSAMPLED_END }
    const span = new ChainSpanRecord(context, spanId, pathTemplate(path), node, attempt, hedge, performance.now())
    return {
      headers,
      end: (outcome: ChainOutcome) => {
        if (span.endMs !== 0) return
        span.outcome = outcome
        span.endMs = performance.now()
        this.#queue.add(span)
      }
    }
  }
}

const UNSAMPLED_END = (): void => {}
