// Label values the rest of the service passes to the metrics (docs/metrics.md). They live apart
// from registry.ts, which loads prom-client: the HTTP layer names them with metrics off, and
// prom-client is then never loaded (service.ts imports the registry only when metrics are on).

/** The route label of a request no route matched (404, 405): never the raw URL, whose values are unbounded. */
export const UNMATCHED_ROUTE = 'unmatched'

/** The route label of a request Node itself refused (malformed, headers too large, timed out) before it had a route. */
export const CLIENT_ERROR_ROUTE = 'clientError'

/** The method label of such a request: Node could not read one. */
export const UNKNOWN_METHOD = 'unknown'

/**
 * Why a request is refused with 503 + Retry-After: the keys of `Shedding.total`, the `reason`
 * of the `shedding` summary line and of edge_api_shed_total (docs/metrics.md lists them);
 * admission/shedding.ts counts them.
 * The first three are the names under-pressure gave what it measures (the sampler is admission/loop-sampler.ts).
 */
export const SHED_REASONS = [
  /** The admission policy (admission/admission.ts) turned the request away. */
  'eventLoopDelay',
  /** The hard limits (admission/admission.ts): off in production, set by tests and the bench. */
  'eventLoopUtilization',
  'heapUsedBytes',
  /** The bounded queue of chain requests is full (ChainBusyError). */
  'chainQueue',
  /** A route group's own queue is full (RouteGroupBusyError): the optional verify routes. */
  'groupQueue'
] as const

export type ShedReason = typeof SHED_REASONS[number]

/**
 * Why a client's request is refused with 429 + Retry-After, as its own excess rather than the
 * replica's overload: the `reason` of edge_api_refusals_total (docs/metrics.md). The router's
 * own refusals never reach a replica: they are in the router's metrics.
 */
export const REFUSAL_REASONS = [
  /** Over its fair share while the replica queues or sheds (src/admission/fair-admission.ts, src/fair-queue.ts). */
  'fair_share',
  /** Over an explicit EDGE_API_RATE_LIMIT (src/admission/rate-limit.ts). */
  'rate_limit'
] as const

export type RefusalReason = typeof REFUSAL_REASONS[number]
