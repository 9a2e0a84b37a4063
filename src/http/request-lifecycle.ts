import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, FastifyTypeProvider, HookHandlerDoneFunction, RawServerDefault } from 'fastify'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { endCounted } from '../admission/fair-admission.js'
import { timeAnswer, type RequestMetrics } from '../metrics/requests.js'
import type { AccessLine } from './access-log.js'
import { hasRequiredHost, refuseMissingHost } from './client-errors.js'
import type { Pipelining } from './pipelining.js'
import { clientRequestId, REQUEST_ID_HEADER } from './request-id.js'

// What every request of the public app goes through, whatever its route: one onRequest hook,
// one 'close' listener and one onResponse hook on the root instance, each doing in one call
// what used to be a hook (or a listener) of its own per concern. A hook costs its runner's
// step and a listener its registration and its removal on every request: with five root
// onRequest hooks, three 'close' listeners and two onResponse hooks, that was about a tenth of
// a /v1/status answer's CPU besides what each did (docs/performance.md).

export interface LifecycleOptions {
  /** Bounds what a pipelining connection costs (pipelining.ts): the last step of onRequest. */
  readonly pipelining: Pipelining
  /** In flight and durations; none when metrics are off (EDGE_API_METRICS_PORT=off). */
  readonly metrics?: RequestMetrics | undefined
  /**
   * Headers every request gets once its Host is checked, whatever its fate after that (a
   * refusal too): CORS for any origin (cors.ts: anyOriginHeaders), which never change.
   */
  readonly fixedHeaders?: Readonly<Record<string, string>> | undefined
  /** The access line, from info on (access-log.ts); none below. */
  readonly access?: AccessLine | undefined
}

/**
 * Registers the request's lifecycle on `app`'s root: in onRequest, in this order, the metrics'
 * start (a request waiting its pipelining turn is in flight, timed from arrival), its 'close'
 * listener, the X-Request-Id answer header, the Host check, the fixed headers, then the
 * pipelining turn; when the response closes (answered, or its client gone), the metrics' end,
 * fair share's count (fair-admission.ts: endCounted) and the pipelining turn's; in onResponse the duration and the access line.
 */
export function requestLifecycle<Logger extends FastifyBaseLogger, Provider extends FastifyTypeProvider> (
  app: FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger, Provider>, options: LifecycleOptions
): void {
  const { pipelining, metrics, access } = options
  const fixed = Object.entries(options.fixedHeaders ?? {})
  // 'close' always comes, answered or not (Fastify's onResponse does not run for a request
  // whose client went away first; Pipelining closes the answers Node leaves queued on a closed
  // connection). Taken once: Node may close one of those too. One function for every response:
  // it ends the request's count in fair share too (fair-admission.ts; none off /v1).
  const closed = metrics === undefined
    ? function (this: ServerResponse): void {
      endCounted(this)
      pipelining.answered(this)
    }
    : function (this: ServerResponse): void {
      metrics.requestEnded()
      endCounted(this)
      pipelining.answered(this)
    }
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    metrics?.requestStarted()
    reply.raw.once('close', closed)
    // The answer says which id to quote: the caller's own when it sent one, ours otherwise.
    reply.header(REQUEST_ID_HEADER, clientRequestId(request.headers) ?? request.id)
    if (!hasRequiredHost(request)) return refuseMissingHost(reply)
    for (const [name, value] of fixed) reply.header(name, value)
    pipelining.admit(request, reply, done)
  })
  if (metrics === undefined && access === undefined) return
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    // The route's pattern (/v1/epochs/:epoch), never the URL: read once, a getter that builds
    // an object on each read. Unmatched requests (404, router errors) have none.
    const route = request.routeOptions.url
    if (metrics !== undefined) timeAnswer(metrics, request, reply, route)
    access?.(request, reply, route ?? null)
    done()
  })
}
