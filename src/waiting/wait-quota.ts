import type { WaitingLimits } from '../config/waiting-settings.js'
import { REFUSALS, refusalMessage } from '../admission/refusals.js'
import { HttpError } from '../errors.js'

// How many requests that stay open (held long-polls and event streams, counted together) one
// client and the whole replica may have at once (EDGE_API_WAITING_PER_CLIENT, EDGE_API_WAITING_MAX;
// docs/waiting.md). Over either, the next is refused with 429 and a Retry-After: never a hang,
// and never counted by the load shedding that protects ordinary reads.

/** Which cap refused a request. */
export type QuotaRefusal = 'client' | 'replica'

/** Retry-After of a 429 over a cap, seconds (src/admission/refusals.ts). */
export const OVER_CAP_RETRY_S = REFUSALS.waitingFull.retryAfterS

/** The 429 that refuses a request over a cap, saying which. */
export function overCap (refused: QuotaRefusal): HttpError {
  const who = refused === 'client' ? 'this client' : 'this replica'
  return new HttpError(REFUSALS.waitingFull.status, refusalMessage(REFUSALS.waitingFull, who), { 'retry-after': String(OVER_CAP_RETRY_S) })
}

/** Counts open requests per client and in all; take() before holding one, give() once it ends. */
export class WaitQuota {
  readonly #limits: WaitingLimits
  readonly #byClient = new Map<string, number>()
  #open = 0

  constructor (limits: WaitingLimits) {
    this.#limits = limits
  }

  /** Requests open now. */
  get open (): number {
    return this.#open
  }

  /** Takes a place for `client`; the cap that refused it, or undefined when taken. */
  take (client: string): QuotaRefusal | undefined {
    if (this.#open >= this.#limits.perReplica) return 'replica'
    const held = this.#byClient.get(client) ?? 0
    if (held >= this.#limits.perClient) return 'client'
    this.#byClient.set(client, held + 1)
    this.#open++
    return undefined
  }

  /** Gives `client`'s place back. */
  give (client: string): void {
    // Only ever after a take() for the same client.
    const held = this.#byClient.get(client) as number
    if (held <= 1) this.#byClient.delete(client)
    else this.#byClient.set(client, held - 1)
    this.#open--
  }
}
