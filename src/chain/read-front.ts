import { BoundedLimit } from '../bounded-limit.js'
import { ChainBusyError, OverShareError } from '../errors.js'
import type { Answer, ReadRequest } from './types.js'

// The front of the chain client, above the choice of node: the limiter bounds reads, not
// attempts, and coalescing shares one upstream read among identical concurrent ones.

export interface ReadFrontOptions {
  /** Chain reads in flight at once (EDGE_API_CHAIN_CONCURRENCY). */
  readonly concurrency: number
  /** How many may wait beyond `concurrency` (in fair order between clients) before the heaviest client's are refused (OverShareError: 429), or new ones shed with 503 (ChainBusyError) when no client is over its share. */
  readonly queueLimit: number
  /** Share one upstream read between identical concurrent reads. */
  readonly coalesce: boolean
  /** Reads the chain once a read has its slot. */
  readonly read: (request: ReadRequest) => Promise<Answer>
}

/**
 * Bounded (BoundedLimit: a concurrency limit and a bounded queue) and coalescing: concurrent identical reads share one
 * upstream read and one parsed result. Results are shared, so callers must not mutate them.
 */
export class ReadFront {
  readonly #limit: BoundedLimit
  readonly #coalesce: boolean
  readonly #read: (request: ReadRequest) => Promise<Answer>
  readonly #pending = new Map<string, Promise<Answer>>()

  constructor (options: ReadFrontOptions) {
    this.#limit = new BoundedLimit({ concurrency: options.concurrency, queueLimit: options.queueLimit, busy: (overShare) => overShare ? new OverShareError() : new ChainBusyError() })
    this.#coalesce = options.coalesce
    this.#read = options.read
  }

  // A coalesced read keeps the trace and the client of the request that started it: its spans
  // are that request's, and it waits in the queue as that client's.
  answer (request: ReadRequest): Promise<Answer> {
    if (!this.#coalesce) return this.#limited(request)
    // One upstream read, hedged at most once, however many share it; an unhedged read never
    // joins a hedged one, and
    // one node's read never joins another's (nor the choice of node's).
    const key = `${request.node === undefined ? '' : `@${request.node}`}${request.hedged ? '' : '!'}${request.height ?? (request.latest === true ? 'latest' : '')} ${request.target}`
    const shared = this.#pending.get(key)
    if (shared !== undefined) return shared
    const read = this.#limited(request).finally(() => this.#pending.delete(key))
    this.#pending.set(key, read)
    return read
  }

  /** Reads waiting for a slot, coalesced ones counted once. */
  get queued (): number {
    return this.#limit.queued
  }

  /** Whether more than half the queue is taken (no hedges meanwhile). */
  get crowded (): boolean {
    return this.#limit.queued > this.#limit.queueLimit / 2
  }

  #limited (request: ReadRequest): Promise<Answer> {
    return this.#limit.run(request.client, async () => this.#read(request))
  }
}
