import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { ShedReason } from '../metrics/labels.js'
import { isBlocked } from './blocked-routes.js'
import { clientOf, keepClients } from './client-identity.js'
import { isPreflight } from './preflight.js'
import type { RateLimiter } from './rate-limit.js'
import { prepareRefusal, REFUSALS } from './refusals.js'
import type { Shedding } from './shedding.js'

// Admission: who may be served, decided before any work, in one hook whose order is read here
// (docs/layout.md, docs/clients-and-limits.md): a browser's preflight passes; then
//   1. blocked routes (EDGE_API_BLOCKED_ROUTES): 403;
//   2. who the client is (client-identity.ts), computed once and kept on the request;
//   3. the explicit per-client limit (EDGE_API_RATE_LIMIT, rate-limit.ts): 429;
//   4. on /v1's routes: a hard limit exceeded (heap, utilisation; off in production): 503;
//   5. on /v1's routes: fair share and the far-over clients' pace, then delay-based shedding
//      (admission.ts over fair-admission.ts and pie.ts): a held 429 for a client over its share,
//      a 503 for the replica's own overload.
// Every refusal is an entry of refusals.ts. What a refusal costs is the least work there is:
// no route's work, no chain read.

/** What load asks of a /v1 request (admission.ts's LoadAdmission). */
export interface LoadStep {
  /** The hard limit the last sample found exceeded, if any. */
  readonly overLimit: ShedReason | undefined
  /** Fair share, pace and the delay policy: `done` when served, a refusal sent otherwise. */
  admit (reply: FastifyReply, client: string, done: HookHandlerDoneFunction): void
}

export interface AdmissionParts {
  /** Counts and answers the 503s and fair share's 429s (app.ts owns it). */
  readonly shedding: Shedding
  /** EDGE_API_BLOCKED_ROUTES' prefixes; none: no route is blocked. */
  readonly blockedRoutes?: ReadonlyArray<readonly string[]>
  /** EDGE_API_RATE_LIMIT's limiter; none: no explicit limit. */
  readonly limiter?: RateLimiter | undefined
}

export class Admission {
  readonly #shedding: Shedding
  readonly #blocked: ReadonlyArray<readonly string[]> | undefined
  readonly #limiter: RateLimiter | undefined
  /** The scopes whose routes load admits too (/v1's and those inside it), each with its step. */
  readonly #byLoad = new WeakMap<object, LoadStep>()

  private constructor (parts: AdmissionParts) {
    this.#shedding = parts.shedding
    this.#blocked = parts.blockedRoutes?.length === 0 ? undefined : parts.blockedRoutes
    this.#limiter = parts.limiter
  }

  /** The hook on every request of `app` (its routes and its not-found answers). */
  static register (app: FastifyInstance, parts: AdmissionParts): Admission {
    const admission = new Admission(parts)
    keepClients(app)
    app.addHook('onRequest', admission.onRequest)
    return admission
  }

  /** The routes `app` (a scope) and the scopes inside it declare from now on are admitted by `load` too (steps 4 and 5). */
  admitByLoad (app: FastifyInstance, load: LoadStep): void {
    const byLoad = this.#byLoad
    app.addHook('onRoute', function (this: FastifyInstance) {
      byLoad.set(this, load)
    })
  }

  /** The one hook, steps 1 to 3; 4 and 5 in #admitByLoad. */
  readonly onRequest = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    // A browser's preflight is never refused: the page's real request reads the refusal.
    if (isPreflight(request)) return done()
    if (this.#blocked !== undefined && isBlocked(request.url, this.#blocked)) {
      reply.send(prepareRefusal(reply, REFUSALS.blockedRoute))
      return
    }
    const client = clientOf(request)
    if (this.#limiter === undefined) return this.#admitByLoad(request, reply, client, done)
    this.#limiter.check(request, reply, client).then((served) => {
      if (served) this.#admitByLoad(request, reply, client, done)
    }, done)
  }

  #admitByLoad (request: FastifyRequest, reply: FastifyReply, client: string, done: HookHandlerDoneFunction): void {
    // The scope the request's route was declared in (the not-found answers': the app's).
    const load = this.#byLoad.get(request.server)
    if (load === undefined) return done()
    const over = load.overLimit
    if (over !== undefined) {
      reply.send(this.#shedding.refuse(reply, over))
      return
    }
    load.admit(reply, client, done)
  }
}
