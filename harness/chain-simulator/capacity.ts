// A real node's cost, when a test gives the simulator one: each query holds one of
// `concurrency` slots for `costMs`; the others wait in line (first come, first served).

export interface Capacity {
  readonly costMs: number
  readonly concurrency: number
}

export class CapacityQueue {
  capacity: Capacity | undefined
  #busy = 0
  readonly #waiting: Array<() => void> = []

  /** Runs `send` now when the node is free (no capacity set), else in a slot, `costMs` after it gets one. */
  run (send: () => void): void {
    if (this.capacity === undefined) {
      send()
      return
    }
    const { costMs, concurrency } = this.capacity
    const start = (): void => {
      this.#busy++
      setTimeout(() => {
        this.#busy--
        send()
        this.#waiting.shift()?.()
      }, costMs)
    }
    if (this.#busy < concurrency) start()
    else this.#waiting.push(start)
  }
}
