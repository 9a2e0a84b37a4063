// The waiting line of a concurrency limit, in fair order instead of arrival order: one FIFO per
// client, served round robin (deficit round robin with every item costing one), so a client
// with one waiter is next after at most one turn of each other waiting client, however many
// the heaviest has queued. When the line is full, the heaviest client (the longest FIFO) loses
// its newest waiter to make room, unless the newcomer's own client is the heaviest, which is
// then refused itself. State is bounded by the line's own limit: a FIFO exists only while its
// client has a waiter, so a million distinct clients never hold more than `limit` entries.

/** The client of work started for no request (head polls, probes, a shared stream's reads): one client of its own. */
export const NO_CLIENT = ''

/** Why a waiter was refused: `fairShare` when its client was over its share of a line others wait in too. */
export interface Refusal {
  readonly overShare: boolean
}

interface Waiter<T> {
  readonly item: T
  readonly refuse: (refusal: Refusal) => void
}

/**
 * One client's waiters, oldest first. Taken from the front by an index, not Array#shift: a
 * lone heavy client holds the whole line in one FIFO (a thousand waiters), and shift() moved
 * every one of them for each slot given (5 µs of a ~480 µs answer in a profile of it).
 */
class Fifo<T> {
  #items: T[] = []
  #head = 0

  get length (): number {
    return this.#items.length - this.#head
  }

  push (item: T): void {
    this.#items.push(item)
  }

  /** The oldest; the caller knows the FIFO is not empty. */
  shift (): T {
    const item = this.#items[this.#head] as T
    this.#items[this.#head] = undefined as T
    this.#head++
    // The taken slots are dropped once they are half the array: amortized O(1) a waiter.
    if (this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head)
      this.#head = 0
    }
    return item
  }

  /** The newest; the caller knows the FIFO is not empty. */
  pop (): T {
    return this.#items.pop() as T
  }
}

export class FairQueue<T> {
  readonly #limit: number
  // Insertion order is the round-robin order: a client served goes to the back.
  readonly #fifos = new Map<string, Fifo<Waiter<T>>>()
  #size = 0

  constructor (limit: number) {
    this.#limit = limit
  }

  /** Waiters in the line. */
  get size (): number {
    return this.#size
  }

  /** Clients with a waiter in the line. */
  get clients (): number {
    return this.#fifos.size
  }

  /**
   * Adds `item` for `client`; when the line is full, refuses the heaviest client's newest
   * waiter (calling its `refuse`) or this one, and says whether this one was let in.
   */
  push (client: string, item: T, refuse: (refusal: Refusal) => void): boolean {
    if (this.#size >= this.#limit) {
      const heaviest = this.#heaviest()
      const own = this.#fifos.get(client)?.length ?? 0
      if (heaviest === undefined || heaviest.length <= own + 1) {
        // Over its share only beside others: a lone client's full line is the replica's own limit.
        refuse({ overShare: own > 0 && this.#fifos.size > 1 })
        return false
      }
      const evicted = heaviest.pop()
      this.#size--
      evicted.refuse({ overShare: true })
    }
    let fifo = this.#fifos.get(client)
    if (fifo === undefined) {
      fifo = new Fifo()
      this.#fifos.set(client, fifo)
    }
    fifo.push({ item, refuse })
    this.#size++
    return true
  }

  /** The next waiter in fair order, if any. */
  shift (): T | undefined {
    const next = this.#fifos.entries().next()
    if (next.done === true) return undefined
    const [client, fifo] = next.value
    const waiter = fifo.shift()
    this.#fifos.delete(client)
    if (fifo.length > 0) this.#fifos.set(client, fifo)
    this.#size--
    return waiter.item
  }

  #heaviest (): Fifo<Waiter<T>> | undefined {
    let heaviest: Fifo<Waiter<T>> | undefined
    for (const fifo of this.#fifos.values()) {
      if (heaviest === undefined || fifo.length > heaviest.length) heaviest = fifo
    }
    return heaviest
  }
}
