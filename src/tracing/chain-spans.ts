import { SpanKind, SpanStatusCode, trace, type Attributes, type TextMapPropagator, type Tracer } from '@opentelemetry/api'
import type { ChainOutcome, ChainTrace, ChainTracer, TracedExchange } from '../chain/client.js'
import { pathTemplate } from './path-template.js'
import type { RequestTrace, ServerSpans } from './server-spans.js'

/**
 * One CLIENT span per exchange with a chain node, child of the request's span, with
 * traceparent sent to the node: the node by its position (edge_api.chain.node=1, as /readyz
 * names it), never its URL; the path's template; the outcome; the attempt under failover
 * or hedging (edge_api.chain.hedge on a hedge).
 * An exchange outside a request (a background probe of a node that is down) carries no trace
 * and is not traced; nor is one that starts after its request's end.
 */
export class ChainSpans implements ChainTracer {
  readonly #tracer: Tracer
  readonly #propagator: TextMapPropagator
  readonly #server: ServerSpans

  constructor (tracer: Tracer, propagator: TextMapPropagator, server: ServerSpans) {
    this.#tracer = tracer
    this.#propagator = propagator
    this.#server = server
  }

  exchange (of: ChainTrace, node: number, path: string, attempt: number, hedge = false): TracedExchange | undefined {
    // The chain client carries what src/cache/http-cache.ts gave the request's readers: its RequestTrace.
    const parent = this.#server.contextOf(of as RequestTrace)
    if (parent === undefined) return undefined
    const template = pathTemplate(path)
    // Attributes after the start, and only on a recording span (as the server span's, server-spans.ts).
    const span = this.#tracer.startSpan(`GET ${template}`, { kind: SpanKind.CLIENT }, parent)
    if (span.isRecording()) {
      const attributes: Attributes = {
        'http.request.method': 'GET',
        'url.template': template,
        'edge_api.chain.node': node,
        'edge_api.chain.attempt': attempt
      }
      // The conventions' count of resends: attempts on other nodes after the first.
      if (attempt > 1) attributes['http.request.resend_count'] = attempt - 1
      // A hedged read's second attempt, sent while the first was still waiting (docs/hedged-reads.md).
      if (hedge) attributes['edge_api.chain.hedge'] = true
      span.setAttributes(attributes)
    }
    const headers: Record<string, string> = {}
    this.#propagator.inject(trace.setSpan(parent, span), headers, HEADER_SETTER)
    return {
      headers,
      end: (outcome: ChainOutcome) => {
        span.setAttribute('edge_api.chain.outcome', outcome)
        if (outcome !== 'ok') {
          span.setAttribute('error.type', outcome)
          span.setStatus({ code: SpanStatusCode.ERROR })
        }
        span.end()
      }
    }
  }
}

const HEADER_SETTER = {
  set (headers: Record<string, string>, key: string, value: string): void {
    headers[key] = value
  }
}
