// How many requests that stay open (held long-polls, event streams) one client and the whole
// replica may have at once (docs/waiting.md). Over either, the next is refused with 429 and a
// Retry-After: never a hang, and never counted by the load shedding that protects ordinary reads.

/** Which cap refused a request. */
export type QuotaRefusal = 'client' | 'replica'

export interface QuotaLimits {
  /** Open at once per client (its address, src/http/waiting-client.ts). */
  readonly perClient: number
  /** Open at once on this replica. */
  readonly perReplica: number
}

/** Counts open requests per client and in all; take() before holding one, give() once it ends. */
export class WaitQuota {
  readonly #limits: QuotaLimits
  readonly #byClient = new Map<string, number>()
  #open = 0

  constructor (limits: QuotaLimits) {
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
