import type { FastifyReply } from 'fastify'
import type { RefusalReason, ShedReason } from '../metrics/labels.js'
import { prepareRefusal, REFUSALS } from './refusals.js'

/** The subset of a pino logger shedding writes to. */
export interface SheddingLog {
  info (fields: object, msg: string): void
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Requests turned away with 503 (load shedding, a full chain queue) or 429 (a client's excess), counted by reason. */
    shedding: Shedding
  }
}

export const SUMMARY_INTERVAL_MS = 1000

/** A refusal's reason: the replica's overload (503) or the client's excess (429). */
export type Reason = ShedReason | RefusalReason

/**
 * The cheap way out for a request the process will not serve: 503 with Retry-After, a
 * pre-serialized body, a counter, and at most one summary line per second. Shedding happens
 * when the process is short of time, so a shed request must cost far less than a served one:
 * no per-request log line, no stack, no error handler, no serializer.
 */
export class Shedding {
  /** Requests turned away since start, by reason. */
  readonly total: Partial<Record<Reason, number>> = {}
  readonly #log: SheddingLog
  readonly #intervalMs: number
  // Replies refused here; the access log leaves them to the summary line.
  readonly #refused = new WeakSet<FastifyReply>()
  #period = new Map<Reason, number>()
  #timer: NodeJS.Timeout | undefined
  #describe: () => object = () => ({})
  readonly #onShed: ((reason: Reason) => void) | undefined

  /** `onShed` hears of every refusal, with its reason (the metrics' edge_api_shed_total and edge_api_refusals_total). */
  constructor (log: SheddingLog, onShed?: (reason: Reason) => void, intervalMs = SUMMARY_INTERVAL_MS) {
    this.#log = log
    this.#onShed = onShed
    this.#intervalMs = intervalMs
  }

  /** Adds the shedding policy's state (delay, drop probability) to each summary line. */
  describeWith (describe: () => object): void {
    this.#describe = describe
  }

  /** The shedding policy's state now (for the summary line and for metrics). */
  get state (): object {
    return this.#describe()
  }

  /**
   * Counts the request and prepares its 503 (refusals.ts: the entry of `reason`): status,
   * Retry-After and a JSON content type are set on `reply`; the returned body is to be sent as it is.
   */
  refuse (reply: FastifyReply, reason: ShedReason, message: string = REFUSALS[reason].message, retryAfterS = 1): Buffer {
    this.#count(reason)
    this.#refused.add(reply)
    return prepareRefusal(reply, REFUSALS[reason], message, retryAfterS)
  }

  /**
   * Counts a client's excess and prepares its 429 (refusals.ts: fair share's), as refuse() does
   * its 503: the client is over its share, not the replica out of capacity.
   */
  refuseClient (reply: FastifyReply, reason: 'fair_share'): Buffer {
    this.#count(reason)
    this.#refused.add(reply)
    return prepareRefusal(reply, REFUSALS.fairShare)
  }

  /** Whether a request was refused within the last summary interval (no hedged chain reads meanwhile). */
  get active (): boolean {
    return this.#period.size > 0
  }

  /** Whether `reply` is a 503 or 429 this object refused. */
  refused (reply: FastifyReply): boolean {
    return (reply.statusCode === 503 || reply.statusCode === 429) && this.#refused.has(reply)
  }

  /** Writes the summary of the requests shed since the last one, if any (also at close). */
  flush (): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#period.size === 0) return
    let count = 0
    let reason = ''
    let most = 0
    for (const [r, n] of this.#period) {
      count += n
      if (n > most) [reason, most] = [r, n]
    }
    const byReason = this.#period.size > 1 ? { byReason: Object.fromEntries(this.#period) } : {}
    this.#period = new Map()
    this.#log.info({ count, reason, ...byReason, total: { ...this.total }, ...this.state }, 'shedding')
  }

  #count (reason: Reason): void {
    this.#onShed?.(reason)
    this.total[reason] = (this.total[reason] ?? 0) + 1
    this.#period.set(reason, (this.#period.get(reason) ?? 0) + 1)
    if (this.#timer === undefined) {
      // The first refusal of a quiet period arms the summary; the process never waits for it.
      this.#timer = setTimeout(() => this.flush(), this.#intervalMs)
      this.#timer.unref()
    }
  }
}
