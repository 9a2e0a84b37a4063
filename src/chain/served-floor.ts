// The served floor (docs/heights-and-cache.md): the highest height a latest-state answer was
// served at. A replica never serves below it, so its answers never go backwards.

/** The highest height served to a latest-state read (0: none yet). */
export class ServedFloor {
  #height = 0

  get height (): number {
    return this.#height
  }

  /** A latest-state answer is served at `height`: the floor rises to it (never falls). */
  raise (height: number): void {
    if (height > this.#height) this.#height = height
  }

  /**
   * The heads that raised the floor were found false (a node restarted lower, a glitch its
   * next poll corrected): a floor more than `window` blocks above `best` drops to it, or every
   * latest read would be pinned to a height no node has until restart. True when it dropped.
   */
  dropAbove (best: number, window: number): boolean {
    if (this.#height - best <= window) return false
    this.#height = best
    return true
  }
}
