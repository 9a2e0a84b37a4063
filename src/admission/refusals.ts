import type { FastifyReply } from 'fastify'
import type { RefusalReason, ShedReason } from '../metrics/labels.js'

// Every refusal the service makes, by a replica or by the router in front of the pool, in one
// list: its status, the message of its JSON body, its Retry-After, whether it is held for that
// long before it goes (a replica's refusal-hold.ts, the router's tarpit), and the label it is
// counted under. A client sees one shape of each refusal wherever it is made. The router's
// configuration is rendered by a shell script in its own image (compose/router/render.sh),
// which cannot read this file: it keeps copies, and test/admission/refusals.test.ts fails,
// naming the refusal, until each copy agrees with its entry here.
// A refused event stream is answered in a stream's shape instead (stream-refusal.ts): 200
// text/event-stream with the refusal's Retry-After as its retry:, which an EventSource follows.

/** Where a refusal is made: by a replica (this code), by the router (render.sh's copy), or by both alike. */
export type RefusalSite = 'replica' | 'router' | 'both'

export interface Refusal {
  readonly status: 403 | 429 | 503
  /**
   * The body's `message`. `{detail}` stands for what only the place of refusal knows (the
   * limit's terms, whose cap is full): refusalMessage() fills it in.
   */
  readonly message: string
  /** Retry-After, seconds; `bucket`: the limit's own, from its bucket, per answer; undefined: none (it would not help). */
  readonly retryAfterS: number | 'bucket' | undefined
  /** Held for its Retry-After before it is sent, so a client that ignores it cannot spin on refusals. */
  readonly held: boolean
  /** edge_api_shed_total's reason (a 503) or edge_api_refusals_total's (a client's 429); undefined: counted by its own part or by the router. */
  readonly metric: ShedReason | RefusalReason | undefined
  readonly site: RefusalSite
}

const OVERLOADED = 'Service Unavailable'
const shed = (metric: ShedReason, message = OVERLOADED): Refusal => ({ status: 503, message, retryAfterS: 1, held: false, metric, site: 'replica' })

export const REFUSALS = {
  /** EDGE_API_BLOCKED_ROUTES (blocked-routes.ts). */
  blockedRoute: { status: 403, message: 'This route is currently blocked.', retryAfterS: undefined, held: false, metric: undefined, site: 'replica' },
  /** The optional verify routes while EDGE_API_EXPOSE_OPTIONAL_ROUTES=false (src/routes/v1/verify.ts; the router answers them so too). */
  optionalRouteHidden: { status: 403, message: 'this optional route is not exposed (EDGE_API_EXPOSE_OPTIONAL_ROUTES=false)', retryAfterS: undefined, held: false, metric: undefined, site: 'both' },
  /** EDGE_API_RATE_LIMIT (rate-limit.ts): `{detail}` is the limit, "600 requests per 1m". */
  rateLimit: { status: 429, message: 'Too Many Requests: this client is over its limit of {detail}', retryAfterS: 'bucket', held: false, metric: 'rate_limit', site: 'replica' },
  /** A client over its fair share while the replica is busy (fair-admission.ts), or the router nearly full. */
  fairShare: { status: 429, message: 'too many requests from this client while the service is busy; retry after the time in Retry-After', retryAfterS: 1, held: true, metric: 'fair_share', site: 'both' },
  /** Delay-based shedding (pie.ts) and the hard limits (admission.ts): the replica's own overload. */
  eventLoopDelay: shed('eventLoopDelay'),
  eventLoopUtilization: shed('eventLoopUtilization'),
  heapUsedBytes: shed('heapUsedBytes'),
  /** The chain reads' queue is full (ChainBusyError's message, src/errors.ts). */
  chainQueue: shed('chainQueue', 'too many chain queries in progress; retry shortly'),
  /** A route group's queue is full: its own message (the verify routes' BUSY). */
  groupQueue: shed('groupQueue', '{detail}'),
  /** Over a cap of held long-polls and event streams (src/waiting/wait-quota.ts): `{detail}` is whose cap. */
  waitingFull: { status: 429, message: 'too many requests waiting for the chain (long-polls and event streams together: {detail} is at its limit); retry later', retryAfterS: 5, held: false, metric: undefined, site: 'both' },
  /** The router's queue past EDGE_API_ROUTER_QUEUE_LENGTH: a replica's shed 503 (counted as HAProxy's dreq). */
  routerQueueFull: { status: 503, message: OVERLOADED, retryAfterS: 1, held: false, metric: undefined, site: 'router' },
  /** The router's per-client connection and request limits (EDGE_API_ROUTER_CLIENT_MAX_*), tarpitted. */
  routerClientLimit: { status: 429, message: 'Too Many Requests', retryAfterS: 10, held: true, metric: undefined, site: 'router' }
} as const satisfies Record<string, Refusal>

export type RefusalName = keyof typeof REFUSALS

/** The refusal's message, its `{detail}` filled in. */
export function refusalMessage (refusal: Refusal, detail: string): string {
  return refusal.message.replace('{detail}', detail)
}

/** The JSON body of a refusal: one Buffer per message, built once. */
const bodies = new Map<string, Buffer>()
export function refusalBody (message: string): Buffer {
  let body = bodies.get(message)
  if (body === undefined) {
    body = Buffer.from(JSON.stringify({ message }))
    bodies.set(message, body)
  }
  return body
}

/**
 * Prepares `reply` as `refusal`: its status, Retry-After (`retryAfterS` for a computed one)
 * and JSON content type; the returned body is to be sent as it is.
 */
export function prepareRefusal (reply: FastifyReply, refusal: Refusal, message = refusal.message, retryAfterS = refusal.retryAfterS): Buffer {
  reply.code(refusal.status)
  if (typeof retryAfterS === 'number') reply.header('retry-after', String(retryAfterS))
  reply.header('content-type', 'application/json; charset=utf-8')
  return refusalBody(message)
}
