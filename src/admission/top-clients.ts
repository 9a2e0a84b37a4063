// Which clients take the most, for the operator's log (never a metric label: clients are
// unbounded): the heaviest clients by requests and by refusals, counted with Space-Saving
// (Metwally et al. 2005) in TRACKED entries whatever the number of distinct clients: a client
// not tracked takes the place of the least counted and inherits its count, so any client with
// more than 1/TRACKED of the period's requests is certain to be listed, counts over-estimated
// by at most what it inherited.

export const TRACKED = 16

/** The subset of a pino logger the line is written to. */
export interface TopClientsLog {
  info (fields: object, msg: string): void
}

export class HeavyHitters {
  readonly #counts = new Map<string, number>()
  #total = 0

  /** Counts one for `client`. */
  add (client: string): void {
    this.#total++
    const count = this.#counts.get(client)
    if (count !== undefined) {
      this.#counts.set(client, count + 1)
      return
    }
    if (this.#counts.size < TRACKED) {
      this.#counts.set(client, 1)
      return
    }
    let least = ''
    let leastCount = Infinity
    for (const [key, value] of this.#counts) {
      if (value < leastCount) [least, leastCount] = [key, value]
    }
    this.#counts.delete(least)
    this.#counts.set(client, leastCount + 1)
  }

  /** Counted since the last reset, all clients. */
  get total (): number {
    return this.#total
  }

  /** The `n` heaviest, heaviest first. */
  top (n: number): Array<{ client: string, count: number }> {
    return [...this.#counts].sort((a, b) => b[1] - a[1]).slice(0, n).map(([client, count]) => ({ client, count }))
  }

  reset (): void {
    this.#counts.clear()
    this.#total = 0
  }
}

/** Requests and refusals by client, written as one line a period (when there were any). */
export class TopClients {
  readonly requests = new HeavyHitters()
  readonly refusals = new HeavyHitters()
  readonly #log: TopClientsLog

  constructor (log: TopClientsLog) {
    this.#log = log
  }

  /** Writes the period's line and starts the next period. */
  flush (activeClients: number): void {
    if (this.requests.total === 0 && this.refusals.total === 0) return
    this.#log.info({
      requests: this.requests.total,
      refusals: this.refusals.total,
      activeClients,
      topByRequests: this.requests.top(5),
      topByRefusals: this.refusals.top(5)
    }, 'top clients')
    this.requests.reset()
    this.refusals.reset()
  }
}
