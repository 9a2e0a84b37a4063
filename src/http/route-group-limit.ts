import { BoundedLimit } from '../bounded-limit.js'
import { OverShareError } from '../errors.js'
import { NamedError } from '../named-error.js'

// The concurrency limit and bounded queue of a group of CPU-heavy routes (the optional verify
// routes): a BoundedLimit whose refusal is RouteGroupBusyError. A slot is taken once the
// request's body has arrived and held until its response is written or its client leaves
// (chain reads, verification), so the group can never take more than its share of the
// process, however many clients ask at once, and a slow upload never holds one.

export interface RouteGroupLimitOptions {
  readonly concurrency: number
  readonly queueLimit: number
  /** The 503 message for a request beyond the queue. */
  readonly busyMessage: string
}

/** A request beyond the group's queue, no client over its share: app.ts answers it 503 + Retry-After as shed load (`groupQueue`); a client over its share gets OverShareError (429). */
export class RouteGroupBusyError extends NamedError {}

export class RouteGroupLimit extends BoundedLimit {
  constructor (options: RouteGroupLimitOptions) {
    super({ concurrency: options.concurrency, queueLimit: options.queueLimit, busy: (overShare) => overShare ? new OverShareError() : new RouteGroupBusyError(options.busyMessage) })
  }
}
