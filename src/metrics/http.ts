import type { Counter, Registry } from 'prom-client'
import type { Histogram } from './histogram.js'
import { counterOf, durationHistogram, gaugeReading } from './instruments.js'
import { REFUSAL_REASONS, SHED_REASONS, type RefusalReason, type ShedReason } from './labels.js'

// The metrics of the public port (docs/metrics.md): requests answered and in flight, the
// drain, the replica's 503s (shed) and a client's 429s (refusals), the active clients. Part of
// a service's Metrics (registry.ts), in its registry.

/** What the HTTP gauges read at scrape time (registry.ts's MetricsSources). */
export interface HttpSources {
  readonly draining: () => boolean
  readonly activeClients: () => number
}

export class HttpMetrics {
  #inFlight = 0
  readonly #requestDuration: Histogram<'method' | 'route' | 'status_code'>
  readonly #shed: Counter<'reason'>
  readonly #refusals: Counter<'reason'>

  constructor (registry: Registry, sources: () => HttpSources) {
    this.#requestDuration = durationHistogram(registry, 'http_request_duration_seconds',
      'Time to answer an HTTP request on the public port, by route pattern ("unmatched" when no route matched)',
      ['method', 'route', 'status_code'])
    gaugeReading(registry, 'edge_api_requests_in_flight', 'HTTP requests received on the public port and not answered yet',
      () => this.#inFlight)
    gaugeReading(registry, 'edge_api_draining', '1 from the drain latch (SIGTERM) on: /readyz answers draining, the replica is leaving',
      () => sources().draining() ? 1 : 0)
    this.#shed = counterOf(registry, 'edge_api_shed_total', 'Requests refused with 503 + Retry-After to protect the service, by reason',
      ['reason'], SHED_REASONS.map((reason) => ({ reason })))
    this.#refusals = counterOf(registry, 'edge_api_refusals_total',
      'Requests refused with 429 + Retry-After as a client\'s own excess, by reason: fair_share (over its share while the replica is busy), rate_limit (over EDGE_API_RATE_LIMIT)',
      ['reason'], REFUSAL_REASONS.map((reason) => ({ reason })))
    gaugeReading(registry, 'edge_api_active_clients', 'Distinct clients with a /v1 request within the last 10 s (estimated in bounded memory: exact while few)',
      () => sources().activeClients())
  }

  requestStarted (): void {
    this.#inFlight++
  }

  requestEnded (): void {
    this.#inFlight--
  }

  /** One answered request: `route` is its pattern (UNMATCHED_ROUTE when none matched). */
  requestAnswered (method: string, route: string, statusCode: number, seconds: number): void {
    this.#requestDuration.seriesOf(method, route, statusCode).observe(seconds)
  }

  /** A request refused: with 503 + Retry-After (shed) or, for a client's excess, 429 (refused). */
  shed (reason: ShedReason | RefusalReason): void {
    if ((REFUSAL_REASONS as readonly string[]).includes(reason)) this.#refusals.inc({ reason })
    else this.#shed.inc({ reason })
  }

  /** A request refused because of its client (429 over EDGE_API_RATE_LIMIT, or over its fair share). */
  refused (reason: RefusalReason): void {
    this.#refusals.inc({ reason })
  }
}
